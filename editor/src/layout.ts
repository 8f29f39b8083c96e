// Where each node sits on the canvas: dagre lays the graph out left to right, as the flow pages
// draw it (src/http/pages/graph-svg.ts); a node the user dragged keeps its place.
import dagre from '@dagrejs/dagre'
import type { Graph } from './document.js'

const NODE_WIDTH = 190
const NODE_HEIGHT = 58

export function layoutGraph(graph: Graph): Map<string, { x: number; y: number }> {
  const g = new dagre.graphlib.Graph({ multigraph: true })
  g.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 70, marginx: 20, marginy: 20 })
  g.setDefaultEdgeLabel(() => ({}))
  const ids = new Set(graph.nodes.map((n) => n.id))
  for (const node of graph.nodes) g.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT })
  for (const node of graph.nodes) {
    for (const [port, target] of Object.entries(node.next)) if (ids.has(target)) g.setEdge(node.id, target, {}, port)
  }
  dagre.layout(g)
  const out = new Map<string, { x: number; y: number }>()
  for (const id of g.nodes()) {
    const { x, y } = g.node(id)
    out.set(id, { x: x - NODE_WIDTH / 2, y: y - NODE_HEIGHT / 2 })
  }
  return out
}
