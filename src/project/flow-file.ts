// One flow file → a Flow, with every problem of the file. Cross-file checks (slugs) come later.
import { createHash } from 'node:crypto'
import { basename, extname } from 'node:path'
import { checkGraph } from './check-graph.js'
import { readSchedule, warnOpenScheduledFlow } from './check-schedule.js'
import { settingsCheckContext } from './check-context.js'
import { checkTemplates } from './check-templates.js'
import { shapeValidator } from './ajv.js'
import type { CorsSettings, Flow, FlowNode, Problem, Secrets, StartInfo } from '../model/project.js'
import type { SettingsCheckContext } from '../nodes/types.js'
import { findEntry, readNodeEntries, reportSettingsProblems, type NodeEntry } from './node-entries.js'
import { describeSchemaErrors } from './schema-messages.js'
import { FLOW_FILE_SCHEMA } from '../model/shapes.js'
import { slugify } from './slug.js'
import { readPlainYaml } from './plain-yaml.js'
import { countCheckedFlowFile } from './long-load.js'
import { parseYamlSource, ProblemCollector, type SourcePath, type YamlSource } from './yaml-source.js'

export const FLOW_FILE_EXTENSIONS = ['.yaml', '.yml', '.json']

/**
 * Whether a file name in the flows folder is a flow file: a flow extension and not hidden, so an
 * editor's `.hello-copy.yaml` or macOS's `._hello.yaml` is never loaded as a flow.
 */
export function isFlowFileName(name: string): boolean {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1)
  if (base.startsWith('.')) return false
  const dot = base.lastIndexOf('.')
  return dot > 0 && FLOW_FILE_EXTENSIONS.includes(base.slice(dot).toLowerCase())
}

export interface FlowFileContext {
  timezone: string
  secrets: Secrets
  secretsFile: string
  /** The project's CORS settings, which a Start's `cors` fields override. */
  cors?: CorsSettings
}

export interface FlowFileResult {
  /** Path relative to the project folder. */
  file: string
  /** sha1 of the text: the flow's version. */
  version: string
  /** The flow's slug, when its name gives one (set even when the file has errors). */
  slug: string | null
  /** Where slug problems point: the `name` value, or the top of the file. */
  slugAt: SourcePath
  /** Problems of this file alone. */
  problems: Problem[]
  /** The flow, when the file has no error of its own. */
  flow: Flow | null
  /** Positions resolver for later (cross-file) problems. */
  collector: ProblemCollector
}

export function checkFlowFile(file: string, text: string, context: FlowFileContext): FlowFileResult {
  countCheckedFlowFile()
  const json = extname(file).toLowerCase() === '.json'
  // js-yaml's reading when it reads the file as yaml would (plain-yaml.ts), problems or not: the
  // same data gives the same messages, and its events the same positions.
  const source = (json ? null : readPlainYaml(text)) ?? parseYamlSource(text, { json })
  const checked = checkSource(file, text, source, context)
  // Positions of later (cross-file) problems parse the text again; a loaded project keeps only the text.
  checked.collector.source?.dropParsed()
  return checked
}

/** One file checked from a given reading (exported for the test that holds both readers to the same problems). */
export function checkSource(file: string, text: string, source: YamlSource, context: FlowFileContext): FlowFileResult {
  const version = createHash('sha1').update(text).digest('hex')
  const collector = new ProblemCollector(file, source)
  const result = (slug: string | null, slugAt: SourcePath, flow: Flow | null): FlowFileResult => ({
    file,
    version,
    slug,
    slugAt,
    problems: collector.problems,
    flow: collector.hasErrors ? null : flow,
    collector,
  })
  for (const { pos, message } of source.syntaxErrors) collector.at(pos, message)
  if (source.syntaxErrors.length > 0) return result(null, [], null)

  const data = source.data
  const validate = shapeValidator(FLOW_FILE_SCHEMA)
  if (!validate(data ?? {})) {
    for (const issue of describeSchemaErrors(validate.errors ?? [], data ?? {}, { rootName: 'a flow file' })) {
      collector.error(issue.path, issue.message, { key: issue.key })
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return result(null, [], null)
  const raw = data as Record<string, unknown>

  const name = typeof raw.name === 'string' && raw.name !== '' ? raw.name : basename(file, extname(file))
  const slugAt = typeof raw.name === 'string' ? ['name'] : []
  const slug = slugify(name)
  if (slug === '') collector.error(slugAt, `the flow name "${name}" gives an empty slug (the flow's name in URLs); use some letters or digits`)

  const checkContext = settingsCheckContext(context.cors)
  const entries = readNodeEntries(raw.nodes, collector, checkContext)
  // A missing or empty node list is already reported by the file shape.
  const startEntry = Array.isArray(raw.nodes) && raw.nodes.length > 0 ? findEntry(entries, collector) : null
  const start = startEntry ? readEntry(startEntry, checkContext, collector) : null
  const graph = checkGraph(entries, startEntry?.node.id ?? null, collector)
  checkTemplates({ entries, graph, secrets: context.secrets, secretsFile: context.secretsFile }, collector)
  const schedule = readSchedule(raw.schedule, start, context.timezone, collector)
  // Only for a flow without errors: one mistake should give one message.
  if (schedule && start && startEntry && !collector.hasErrors) warnOpenScheduledFlow(startEntry, start, collector)

  const nodes = entries.map((e) => e.node)
  const flow: Flow = {
    slug,
    name,
    ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
    file,
    version,
    nodes,
    nodesById: new Map<string, FlowNode>(nodes.map((n) => [n.id, n])),
    start,
    schedule,
  }
  return result(slug === '' ? null : slug, slugAt, flow)
}

/** The entry node's problems, and the flow's StartInfo from its typed settings. */
function readEntry(entry: NodeEntry, context: SettingsCheckContext, collector: ProblemCollector): StartInfo | null {
  const { node, kind } = entry
  if (!kind?.entry) return null
  reportSettingsProblems(entry, kind.entry.check(node.settings, context, node.parsed), collector)
  return { ...kind.entry.start(node.parsed), node }
}
