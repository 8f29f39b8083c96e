// `{{ references }}` and `${secrets.X}` in node settings: well-formed, rooted at `run` or at a node
// that runs before, and secrets that exist (a warning: they may be supplied at run time).
import { hasTemplate, parseTemplate, TemplateSyntaxError } from '../language/template.js'
import { inspectExpression } from '../language/expression.js'
import type { ExpressionPart } from '../language/template.js'
import { didYouMean } from './suggest.js'
import type { GraphInfo } from './check-graph.js'
import type { Secrets } from '../model/project.js'
import type { NodeEntry } from './node-entries.js'
import type { ProblemCollector, SourcePath } from './yaml-source.js'

const RUN_FIELDS = ['id', 'startedAt', 'trigger', 'scheduledFor', 'resumeUrl']

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
  const byId = new Map(context.entries.filter((entry) => entry.hasId).map((entry) => [entry.node.id, entry]))
  const roots = ['run', ...byRefName.keys()].join(', ')
  for (const entry of context.entries) {
    const skipped = entry.kind?.literalSettings ?? []
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
              collector.warning(
                at,
                `${entry.label}: secret "${part.name}" is not defined in ${context.secretsFile}; it must be supplied at run time (FLOWCTL_SECRET_${part.name})`,
              )
            } else if (context.secrets.get(part.name) === '') {
              collector.warning(
                at,
                `${entry.label}: secret "${part.name}" is empty in ${context.secretsFile}; an auth setting that uses it rejects every request`,
              )
            } else if (shortSecret(context.secrets.get(part.name)!)) {
              collector.warning(at, shortSecretMessage(entry.label, part.name))
            }
            continue
          }
          if (part.kind === 'expr') {
            checkExpression(part, { entry, at, byRefName, byId, roots, graph: context.graph }, collector)
            continue
          }
          const problem = rootProblem(part.path[0] ?? '', part.path[1], { entry, byRefName, byId, roots, graph: context.graph })
          if (problem) collector.error(at, withProblem(`${entry.label}: "{{ ${part.source} }}"`, problem))
        }
      }
    }
  }
}

interface RootContext {
  entry: NodeEntry
  byRefName: Map<string, NodeEntry>
  /** Nodes by id: an id written where a reference name is meant gets its own message. */
  byId: Map<string, NodeEntry>
  /** The known root names, for messages. */
  roots: string
  graph: GraphInfo
}

/** Why a root cannot be read: a phrase after the quoted text, or (`sentence`) a sentence of its own. */
interface RootProblem {
  text: string
  sentence?: boolean
}

function withProblem(subject: string, problem: RootProblem): string {
  return problem.sentence ? `${subject}: ${problem.text}` : `${subject} ${problem.text}`
}

/** Why a root (and its first field, for `run`) cannot be read from this node; null when it can. */
function rootProblem(root: string, field: string | undefined, context: RootContext): RootProblem | null {
  if (root === 'run') {
    return field !== undefined && !RUN_FIELDS.includes(field) ? { text: `refers to run.${field}, but run has only ${RUN_FIELDS.join(', ')}` } : null
  }
  const target = context.byRefName.get(root)
  if (!target && root === 'secrets' && field !== undefined) return { text: `is not how a secret is written; use "\${secrets.${field}}"` }
  // Nodes are referenced by their name in snake_case (SPEC §2, §21); an id is a common slip.
  const owner = target ? undefined : context.byId.get(root)
  if (owner) return { text: `"${root}" is the id of node "${owner.node.name}"; reference it as "${owner.node.refName}"`, sentence: true }
  if (!target) {
    const suggestion = didYouMean(root, ['run', ...context.byRefName.keys()])
    return { text: `refers to "${root}", which is not a node of this flow${suggestion} (known names: ${context.roots})` }
  }
  const { graph, entry } = context
  if (graph.reachable.has(entry.node.id) && !graph.upstream.get(entry.node.id)?.has(target.node.id)) {
    return { text: `refers to "${root}" (${target.label}), which does not run before this node` }
  }
  return null
}

/** An expression's syntax, the roots it reads, and what it may not use; positioned inside the string. */
function checkExpression(part: ExpressionPart, context: RootContext & { at: SourcePath }, collector: ProblemCollector): void {
  const { entry, at } = context
  const shown = `"{{= ${part.source.length > 40 ? `${part.source.slice(0, 37)}...` : part.source} }}"`
  if (part.source.includes('${secrets.')) {
    collector.error(at, `${entry.label}: ${shown} uses a secret; secrets cannot be read by expressions (put the secret outside the {{= }})`, {
      within: part.offset + part.source.indexOf('${secrets.'),
    })
  }
  const inspected = inspectExpression(part.source)
  if ('problem' in inspected) {
    collector.error(at, `${entry.label}: ${shown}: ${inspected.problem.message}`, { within: part.offset + inspected.problem.at })
    return
  }
  for (const problem of inspected.problems) collector.error(at, `${entry.label}: ${shown}: ${problem.message}`, { within: part.offset + problem.at })
  for (const root of inspected.roots) {
    const problem = rootProblem(root.name, root.field, context)
    if (problem) collector.error(at, withProblem(`${entry.label}: ${shown}`, problem), { within: part.offset + root.at })
  }
}

/** Secrets shorter than this are easy to guess and mask ordinary text that happens to match them. */
const SHORT_SECRET_LENGTH = 8

function shortSecret(value: string): boolean {
  return value.length > 0 && value.length < SHORT_SECRET_LENGTH
}

function shortSecretMessage(label: string, name: string): string {
  return `${label}: secret "${name}" is shorter than ${SHORT_SECRET_LENGTH} characters; it is still shown as *** in traces and logs, but so is any text that matches it, and it is easy to guess — use a longer value`
}
