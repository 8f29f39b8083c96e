// The one document both views edit: the flow file's text. The canvas reads the graph from it and
// changes it through yaml's Document (setIn/addIn/deleteIn); only the lines that change between
// yaml's renderings before and after are merged into the text (the flows API's merge), so every
// other line stays byte for byte as written. The code view edits the text itself.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml'
import { mergeEdit } from '../../src/project/flow-edit/merge-lines.js'

export interface GraphNode {
  id: string
  type: string
  name: string
  /** Every key but id, type, name and next. */
  settings: Record<string, unknown>
  /** Port → target node id; a one-port node's `next: x` is `{ out: x }`. */
  next: Record<string, string>
}

export interface Graph {
  name: string
  nodes: GraphNode[]
}

/** yaml's rendering closest to how people write flow files (the merge absorbs the rest). */
const WRITE_OPTIONS = { lineWidth: 0, flowCollectionPadding: false } as const

/** The graph of a flow file, or null when the text is not YAML with a node list. */
export function readGraph(text: string): Graph | null {
  const doc = parseDocument(text)
  if (doc.errors.length > 0) return null
  const data = doc.toJS() as { name?: unknown; nodes?: unknown } | null
  if (!data || typeof data !== 'object' || !Array.isArray(data.nodes)) return null
  const nodes: GraphNode[] = []
  for (const raw of data.nodes as unknown[]) {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) continue
    const { id, type, name, next, ...settings } = raw as Record<string, unknown>
    if (typeof id !== 'string') continue
    nodes.push({ id, type: String(type ?? ''), name: typeof name === 'string' ? name : id, settings, next: nextMap(next) })
  }
  return { name: typeof data.name === 'string' ? data.name : '', nodes }
}

function nextMap(next: unknown): Record<string, string> {
  if (typeof next === 'string') return { out: next }
  if (!next || typeof next !== 'object' || Array.isArray(next)) return {}
  return Object.fromEntries(Object.entries(next as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'))
}

/** The flow as data (what `PUT { flow }` sends). */
export function flowOf(text: string): unknown {
  return parseDocument(text).toJS()
}

/** Reference name of a node (SPEC: `Big Order` → `big_order`). */
export function refName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '_')
}

function edit(text: string, change: (doc: Document, index: (id: string) => number) => void): string {
  const doc = parseDocument(text)
  const nodes = doc.get('nodes')
  const index = (id: string): number => {
    if (!isSeq(nodes)) return -1
    return nodes.items.findIndex((item) => isMap(item) && item.get('id') === id)
  }
  const base = doc.toString(WRITE_OPTIONS)
  change(doc, index)
  const edited = doc.toString(WRITE_OPTIONS)
  return edited === base ? text : (mergeEdit(text, base, edited) ?? edited)
}

/** Appends a node (id, type, name first, then its settings). */
export function addNode(text: string, node: { id: string; type: string; name: string; settings?: Record<string, unknown> }): string {
  return edit(text, (doc) => {
    const value = doc.createNode({ id: node.id, type: node.type, name: node.name, ...node.settings })
    if (isSeq(doc.get('nodes'))) doc.addIn(['nodes'], value)
    else doc.set('nodes', doc.createNode([value]))
  })
}

/** Points `port` of `from` at `to`: `next: to` for one-port nodes, `next: { port: to }` otherwise. */
export function connect(text: string, from: string, port: string, to: string, singlePort: boolean): string {
  return edit(text, (doc, index) => {
    const i = index(from)
    if (i < 0) return
    const next = doc.getIn(['nodes', i, 'next'])
    if (singlePort) doc.setIn(['nodes', i, 'next'], to)
    else if (isMap(next)) doc.setIn(['nodes', i, 'next', port], to)
    else doc.setIn(['nodes', i, 'next'], doc.createNode({ [port]: to }))
  })
}

/** Removes the edge leaving `from` by `port`. */
export function disconnect(text: string, from: string, port: string): string {
  return edit(text, (doc, index) => {
    const i = index(from)
    if (i < 0) return
    const next = doc.getIn(['nodes', i, 'next'])
    if (isMap(next)) {
      doc.deleteIn(['nodes', i, 'next', port])
      if (next.items.length === 0) doc.deleteIn(['nodes', i, 'next'])
    } else doc.deleteIn(['nodes', i, 'next'])
  })
}

/** Removes a node and every edge into it. */
export function removeNode(text: string, id: string): string {
  const graph = readGraph(text)
  let out = text
  for (const node of graph?.nodes ?? []) {
    for (const [port, target] of Object.entries(node.next)) if (target === id) out = disconnect(out, node.id, port)
  }
  return edit(out, (doc, index) => {
    const i = index(id)
    if (i >= 0) doc.deleteIn(['nodes', i])
  })
}

/**
 * Sets one key of a node (`name` or a setting); undefined removes it. A scalar over a scalar keeps
 * the value's comments; an unchanged value leaves the text as it was.
 */
export function setNodeKey(text: string, id: string, key: string, value: unknown): string {
  return edit(text, (doc, index) => {
    const i = index(id)
    if (i < 0) return
    const current = doc.getIn(['nodes', i, key], true)
    const currentValue = isScalar(current) ? current.value : current === undefined ? undefined : (current as { toJSON(): unknown }).toJSON()
    if (JSON.stringify(currentValue) === JSON.stringify(value)) return
    if (value === undefined) doc.deleteIn(['nodes', i, key])
    else doc.setIn(['nodes', i, key], value)
  })
}

/** A node id not used yet: `set`, `set2`, `set3`… */
export function freshId(graph: Graph | null, type: string): string {
  const used = new Set(graph?.nodes.map((n) => n.id))
  if (!used.has(type)) return type
  let n = 2
  while (used.has(`${type}${n}`)) n++
  return `${type}${n}`
}

/** A name whose reference name no node uses yet: `Set`, `Set 2`… */
export function freshName(graph: Graph | null, type: string): string {
  const base = type.charAt(0).toUpperCase() + type.slice(1)
  const used = new Set(graph?.nodes.map((n) => refName(n.name)))
  if (!used.has(refName(base))) return base
  let n = 2
  while (used.has(refName(`${base} ${n}`))) n++
  return `${base} ${n}`
}

/** Ids of the nodes from which `id` can be reached (its references may name only these). */
export function upstreamOf(graph: Graph, id: string): GraphNode[] {
  const into = new Map<string, string[]>()
  for (const node of graph.nodes) for (const target of Object.values(node.next)) into.set(target, [...(into.get(target) ?? []), node.id])
  const seen = new Set<string>()
  const queue = [...(into.get(id) ?? [])]
  while (queue.length) {
    const next = queue.shift()!
    if (seen.has(next) || next === id) continue
    seen.add(next)
    queue.push(...(into.get(next) ?? []))
  }
  return graph.nodes.filter((n) => seen.has(n.id))
}

/** The ids of the nodes whose lines hold one of `lines` (1-based): the canvas marks them. */
export function nodesAtLines(text: string, lines: number[]): Set<string> {
  const found = new Set<string>()
  if (lines.length === 0) return found
  const counter = new LineCounter()
  const doc = parseDocument(text, { lineCounter: counter })
  const nodes = doc.get('nodes')
  if (!isSeq(nodes)) return found
  for (const item of nodes.items) {
    if (!isMap(item) || !item.range) continue
    const first = counter.linePos(item.range[0]).line
    const last = counter.linePos(Math.max(item.range[1] - 1, item.range[0])).line
    const id = item.get('id')
    if (typeof id === 'string' && lines.some((line) => line >= first && line <= last)) found.add(id)
  }
  return found
}
