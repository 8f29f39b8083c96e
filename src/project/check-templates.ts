// `{{ references }}` and `${secrets.X}` in node settings: well-formed, rooted at `run` or at a node
// that runs before, and secrets that exist (a warning: they may be supplied at run time).
import { parseTemplate, hasTemplate, TemplateSyntaxError } from '../flow/template.js'
import { didYouMean } from './suggest.js'
import type { GraphInfo } from './check-graph.js'
import type { Secrets } from './model.js'
import type { NodeEntry } from './node-entries.js'
import type { ProblemCollector, SourcePath } from './yaml-source.js'

const RUN_FIELDS = ['id', 'startedAt', 'trigger', 'scheduledFor']

/** Settings that hold JSON Schemas, not bindings: their strings are never templates. */
const SCHEMA_SETTINGS: Record<string, string[]> = { start: ['inputs'], end: ['schema'] }

export interface TemplateContext {
  entries: NodeEntry[]
  graph: GraphInfo
  secrets: Secrets
  /** The dotenv file as written in flowctl.yaml, for messages. */
  secretsFile: string
}

function* strings(value: unknown, path: (string | number)[]): Generator<[string, (string | number)[]]> {
  if (typeof value === 'string') yield [value, path]
  else if (Array.isArray(value)) for (const [i, item] of value.entries()) yield* strings(item, [...path, i])
  else if (value !== null && typeof value === 'object') for (const [k, item] of Object.entries(value)) yield* strings(item, [...path, k])
}

export function checkTemplates(context: TemplateContext, collector: ProblemCollector): void {
  const byRefName = new Map<string, NodeEntry>()
  for (const entry of context.entries) if (!byRefName.has(entry.node.refName)) byRefName.set(entry.node.refName, entry)
  const roots = ['run', ...byRefName.keys()].join(', ')
  for (const entry of context.entries) {
    const skipped = SCHEMA_SETTINGS[entry.node.type] ?? []
    for (const [setting, value] of Object.entries(entry.node.settings)) {
      if (skipped.includes(setting)) continue
      for (const [text, path] of strings(value, [setting])) {
        if (!hasTemplate(text)) continue
        const at: SourcePath = [...entry.path, ...path]
        let parts
        try {
          parts = parseTemplate(text).parts
        } catch (error) {
          if (!(error instanceof TemplateSyntaxError)) throw error
          collector.error(at, `${entry.label}: ${error.message}`)
          continue
        }
        for (const part of parts) {
          if (typeof part === 'string') continue
          if (part.kind === 'secret') {
            if (!context.secrets.has(part.name)) {
              collector.warning(at, `${entry.label}: secret "${part.name}" is not defined in ${context.secretsFile}; it must be supplied at run time (FLOWCTL_SECRET_${part.name})`)
            }
            continue
          }
          const [root, field] = part.path
          const shown = `"{{ ${part.source} }}"`
          if (root === 'run') {
            if (field !== undefined && !RUN_FIELDS.includes(field)) {
              collector.error(at, `${entry.label}: ${shown} refers to run.${field}, but run has only ${RUN_FIELDS.join(', ')}`)
            }
            continue
          }
          const target = byRefName.get(root ?? '')
          if (!target && root === 'secrets' && field !== undefined) {
            collector.error(at, `${entry.label}: ${shown} is not how a secret is written; use "\${secrets.${field}}"`)
          } else if (!target) {
            const hint = didYouMean(root ?? '', ['run', ...byRefName.keys()])
            collector.error(at, `${entry.label}: ${shown} refers to "${root}", which is not a node of this flow${hint} (known names: ${roots})`)
          } else if (context.graph.reachable.has(entry.node.id) && !context.graph.upstream.get(entry.node.id)?.has(target.node.id)) {
            collector.error(at, `${entry.label}: ${shown} refers to "${root}" (${target.label}), which does not run before this node`)
          }
        }
      }
    }
  }
}
