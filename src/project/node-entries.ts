// The nodes of a flow file: ids, types, names and settings, each checked against its kind.
import { getNodeKind, nodeKinds, parseNodeSettings } from '../nodes/registry.js'
import type { NodeKind, SettingsCheckContext, SettingsProblem } from '../nodes/types.js'
import { settingsValidator } from './ajv.js'
import type { FlowNode } from '../model/project.js'
import { describeSchemaErrors } from './schema-messages.js'
import { referenceName } from './slug.js'
import { didYouMean } from './suggest.js'
import { positionAt, type ProblemCollector, type SourcePath } from './yaml-source.js'

/** A node being loaded: the model node plus what the later checks need. */
export interface NodeEntry {
  node: FlowNode
  kind: NodeKind | undefined
  /** `next` as written; turned into `node.next` by the graph check. */
  rawNext: unknown
  /** Source path of the node (`['nodes', index]`). */
  path: SourcePath
  /** How messages name the node: `node "check"`. */
  label: string
  /** False when the id is missing or not text: the node takes no part in the graph checks. */
  hasId: boolean
}

const OWN_KEYS = new Set(['id', 'type', 'name', 'next'])

export function article(word: string): string {
  return /^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`
}

/** A kind's problems, at their place inside the node and named after it. */
export function reportSettingsProblems(entry: Pick<NodeEntry, 'path' | 'label'>, problems: SettingsProblem[], collector: ProblemCollector): void {
  for (const problem of problems) {
    const at = [...entry.path, ...problem.path]
    const text = `${entry.label}: ${problem.message}`
    if (problem.severity === 'warning') collector.warning(at, text, { key: problem.key })
    else collector.error(at, text, { key: problem.key })
  }
}

/** Finds the one entry node (Start); none or several is an error. */
export function findEntry(entries: NodeEntry[], collector: ProblemCollector): NodeEntry | null {
  const starts = entries.filter((e) => e.kind?.entry)
  const [first, ...others] = starts
  if (!first) {
    const entryType = [...nodeKinds.values()].find((kind) => kind.entry)?.type ?? 'start'
    collector.error(['nodes'], `this flow has no ${entryType} node; add a node with "type: ${entryType}"`, { key: true })
    return null
  }
  for (const other of others) {
    collector.error([...other.path, 'type'], `${other.label}: a flow has exactly one ${first.node.type} node, and ${first.label} is already one`)
  }
  return others.length === 0 ? first : null
}

export function readNodeEntries(nodes: unknown, collector: ProblemCollector, context: SettingsCheckContext): NodeEntry[] {
  if (!Array.isArray(nodes)) return []
  const entries: NodeEntry[] = []
  const byId = new Map<string, NodeEntry>()
  const byRefName = new Map<string, NodeEntry>()
  const source = collector.source
  nodes.forEach((value, index) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return // reported by the file shape
    const raw = value as Record<string, unknown>
    const path = ['nodes', index]
    const hasId = typeof raw.id === 'string' && raw.id !== ''
    const id = hasId ? (raw.id as string) : `#${index + 1}`
    const label = hasId ? `node "${id}"` : `node #${index + 1}`
    if (raw.id === undefined) collector.error(path, `${label} needs an "id"`)
    else if (!hasId) collector.error([...path, 'id'], `${label}: id must be text that is not empty`)

    const kind = typeof raw.type === 'string' ? getNodeKind(raw.type) : undefined
    const known = [...nodeKinds.keys()].join(', ')
    if (raw.type === undefined) collector.error(path, `${label} needs a "type" (one of: ${known})`)
    else if (!kind) {
      const hint = typeof raw.type === 'string' ? didYouMean(raw.type, nodeKinds.keys()) : ''
      collector.error([...path, 'type'], `${label}: "${String(raw.type)}" is not a node type${hint}; use one of: ${known}`)
    }

    let name = id
    if (raw.name !== undefined) {
      if (typeof raw.name === 'string' && raw.name.trim() !== '') name = raw.name
      else collector.error([...path, 'name'], `${label}: name must be text that is not empty`)
    }
    const settings: Record<string, unknown> = {}
    for (const [key, setting] of Object.entries(raw)) if (!OWN_KEYS.has(key)) settings[key] = setting
    if (kind) {
      const validate = settingsValidator(kind)
      if (!validate(settings)) {
        const issues = describeSchemaErrors(validate.errors ?? [], settings, {
          rootName: `${article(kind.type)} node`,
          rootKeys: kind.terminates ? ['id', 'type', 'name'] : ['id', 'type', 'name', 'next'],
        })
        for (const issue of issues) collector.error([...path, ...issue.path], `${label}: ${issue.message}`, { key: issue.key })
      } else if (kind.checkSettings) {
        reportSettingsProblems({ path, label }, kind.checkSettings(settings, context), collector)
      }
    }
    const node: FlowNode = {
      id,
      type: typeof raw.type === 'string' ? raw.type : '',
      name,
      refName: referenceName(name),
      settings,
      // Typed once, here: the engine, the Run API and the OpenAPI generator read this, never `settings`.
      parsed: parseNodeSettings(kind, settings),
      next: {},
      pos: source ? positionAt(source, path) : { line: 1, column: 1 },
    }
    const entry: NodeEntry = { node, kind, rawNext: raw.next, path, label, hasId }
    entries.push(entry)

    const first = hasId ? byId.get(id) : undefined
    if (first) collector.error([...path, 'id'], `node id "${id}" is used twice (first at line ${first.node.pos.line}); node ids must be unique`)
    else if (hasId) byId.set(id, entry)
    const sameRef = byRefName.get(node.refName)
    if (first) {
      // already reported as a duplicate id
    } else if (sameRef) {
      collector.error(
        raw.name === undefined ? [...path, 'id'] : [...path, 'name'],
        `${label}: its reference name "${node.refName}" is already used by ${sameRef.label}; rename one of them`,
      )
    } else {
      byRefName.set(node.refName, entry)
    }
  })
  return entries
}
