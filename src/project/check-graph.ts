// The graph of a flow: `next` shapes and targets, reachability from the Start node, loops, and
// which nodes run before which (what a `{{ reference }}` may name).
import { reachableFrom, upstreamOf } from '../model/flow-graph.js'
import type { NodeEntry } from './node-entries.js'
import { didYouMean } from './suggest.js'
import { article } from './node-entries.js'
import type { ProblemCollector, SourcePath } from './yaml-source.js'

const NO_END = 'this path ends without an End node; the run answers 204'

export interface GraphInfo {
  /** Ids of the nodes reachable from the Start node. */
  reachable: Set<string>
  /** Node id → ids of the nodes that run before it on some path from the Start node. */
  upstream: Map<string, Set<string>>
}

interface Edge {
  from: NodeEntry
  to: string
  /** Source path of the target id, for messages about the edge. */
  at: SourcePath
}

/** Edges of a `next` that is wrong in shape, so one mistake does not also make its targets unreachable. */
function looseEdges(entry: NodeEntry): Edge[] {
  const at = [...entry.path, 'next']
  const { rawNext } = entry
  if (typeof rawNext === 'string') return [{ from: entry, to: rawNext, at }]
  if (rawNext === null || typeof rawNext !== 'object' || Array.isArray(rawNext)) return []
  return Object.entries(rawNext)
    .filter((pair): pair is [string, string] => typeof pair[1] === 'string')
    .map(([port, to]) => ({ from: entry, to, at: [...at, port] }))
}

/** Fills `node.next` from `next` as written and reports shape problems; returns the edges. */
function readEdges(entry: NodeEntry, collector: ProblemCollector): Edge[] {
  const { kind, rawNext, node, label, path } = entry
  const nextPath = [...path, 'next']
  if (!kind) return looseEdges(entry)
  if (kind.terminates || kind.ports(node.parsed).length === 0) {
    if (rawNext !== undefined) collector.error(nextPath, `${label}: ${article(kind.type)} node ends the run, so it has no next; remove it`, { key: true })
    return []
  }
  // A kind with optional ports (a callback wait's `timeout`) takes a node id for `out` or a port map.
  if (kind.singlePort && !(kind.optionalPorts && rawNext !== null && typeof rawNext === 'object')) {
    if (rawNext === undefined) {
      collector.warning(path, `${label}: ${NO_END}`)
      return []
    }
    if (typeof rawNext !== 'string' || rawNext === '') {
      collector.error(nextPath, `${label}: next must be one node id (${article(kind.type)} node has one way out)`)
      return looseEdges(entry)
    }
    node.next.out = rawNext
    return [{ from: entry, to: rawNext, at: nextPath }]
  }
  const ports = kind.ports(node.parsed)
  const example = ports.map((p) => `${p}: <node id>`).join(', ')
  if (rawNext !== undefined && (rawNext === null || typeof rawNext !== 'object' || Array.isArray(rawNext))) {
    collector.error(nextPath, `${label}: next must map each port to a node id, like { ${example} }`)
    return looseEdges(entry)
  }
  const written = (rawNext ?? {}) as Record<string, unknown>
  const edges: Edge[] = []
  for (const [port, target] of Object.entries(written)) {
    if (!ports.includes(port)) {
      collector.error([...nextPath, port], `${label}: "${port}" is not a port of this ${kind.type} node; its ports are: ${ports.join(', ')}`, { key: true })
    } else if (typeof target !== 'string' || target === '') {
      collector.error([...nextPath, port], `${label}: next.${port} must be a node id`)
    } else {
      node.next[port] = target
      edges.push({ from: entry, to: target, at: [...nextPath, port] })
    }
  }
  for (const port of ports) {
    if (!(port in written)) collector.warning(rawNext === undefined ? path : nextPath, `${label}: port "${port}" has no next node; ${NO_END}`, { key: true })
  }
  return edges
}

/** `onError: <nodeId>`: an edge from the port `error`, taken when the node still fails after its retries. */
function onErrorEdge(entry: NodeEntry): Edge | null {
  const target = entry.node.settings.onError
  if (typeof target !== 'string' || target === '' || !entry.kind) return null
  return { from: entry, to: target, at: [...entry.path, 'onError'] }
}

export function checkGraph(allEntries: NodeEntry[], startId: string | null, collector: ProblemCollector): GraphInfo {
  const entries = allEntries.filter((e) => e.hasId)
  const byId = new Map<string, NodeEntry>()
  for (const entry of entries) if (!byId.has(entry.node.id)) byId.set(entry.node.id, entry)
  const outgoing = new Map<string, Edge[]>()
  const incoming = new Map<string, string[]>()
  for (const entry of entries) {
    const edges: Edge[] = []
    const errorEdge = onErrorEdge(entry)
    for (const edge of [...readEdges(entry, collector), ...(errorEdge ? [errorEdge] : [])]) {
      if (!byId.has(edge.to)) {
        const setting = edge === errorEdge ? 'onError' : 'next'
        collector.error(edge.at, `${entry.label}: ${setting} points to "${edge.to}", which is not a node id of this flow${didYouMean(edge.to, byId.keys())}`)
        continue
      }
      if (edge === errorEdge) entry.node.next.error = edge.to
      edges.push(edge)
      incoming.set(edge.to, [...(incoming.get(edge.to) ?? []), entry.node.id])
    }
    if (!outgoing.has(entry.node.id)) outgoing.set(entry.node.id, edges)
  }

  let reachable = new Set<string>()
  if (startId !== null) {
    reachable = reachableFrom(startId, (id) => (outgoing.get(id) ?? []).map((edge) => edge.to)).reached
    for (const entry of entries) {
      if (!reachable.has(entry.node.id)) {
        collector.error([...entry.path, 'id'], `${entry.label} cannot be reached from the start node; connect it with a next, or remove it`)
      }
    }
    reportLoops(startId, outgoing, collector)
  }
  const upstream = upstreamOf(reachable, (id) => incoming.get(id) ?? [])
  return { reachable, upstream }
}

/** Loops are allowed (a run still stops at its timeout) but usually a mistake: warn on each back edge. */
function reportLoops(startId: string, outgoing: Map<string, Edge[]>, collector: ProblemCollector): void {
  const onPath = new Set<string>()
  const done = new Set<string>()
  const visit = (id: string): void => {
    onPath.add(id)
    for (const edge of outgoing.get(id) ?? []) {
      if (onPath.has(edge.to)) {
        collector.warning(edge.at, `${edge.from.label}: next leads back to "${edge.to}", which makes a loop; a looping run stops only at the run timeout`)
      } else if (!done.has(edge.to)) {
        visit(edge.to)
      }
    }
    onPath.delete(id)
    done.add(id)
  }
  visit(startId)
}
