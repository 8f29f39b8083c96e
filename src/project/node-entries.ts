// The nodes of a flow file: ids, types, names and settings, each checked against its kind.
import { getNodeKind, nodeKinds } from '../nodes/registry.js'
import type { NodeKind } from '../nodes/types.js'
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

export function readNodeEntries(nodes: unknown, collector: ProblemCollector): NodeEntry[] {
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
          rootKeys: kind.ports({}).length === 0 ? ['id', 'type', 'name'] : ['id', 'type', 'name', 'next'],
        })
        for (const issue of issues) collector.error([...path, ...issue.path], `${label}: ${issue.message}`, { key: issue.key })
      } else {
        for (const issue of kind.check?.(settings) ?? []) collector.error([...path, ...issue.path], `${label}: ${issue.message}`, { key: issue.key })
      }
    }
    const node: FlowNode = {
      id,
      type: typeof raw.type === 'string' ? raw.type : '',
      name,
      refName: referenceName(name),
      settings,
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
      collector.error(raw.name === undefined ? [...path, 'id'] : [...path, 'name'], `${label}: its reference name "${node.refName}" is already used by ${sameRef.label}; rename one of them`)
    } else {
      byRefName.set(node.refName, entry)
    }
  })
  return entries
}
