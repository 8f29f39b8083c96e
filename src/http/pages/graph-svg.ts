// A flow as an SVG picture, laid out on the server by dagre (left to right, as n8n and Node-RED draw
// flows): each node a box with its kind and name, each edge labelled with its port unless it is
// the only port `out`. A run's path can be highlighted and its failed node marked. Every text goes
// through `html`, which escapes it. Layouts are cached per flow version (Flow objects are replaced
// on reload), so a dashboard refresh does not lay out every flow again.
import dagre from '@dagrejs/dagre'
import type { Flow, FlowNode } from '../../model/project.js'
import { getNodeKind } from '../../nodes/registry.js'
import { retryOf } from '../../nodes/retry.js'
import { html, type SafeHtml } from '../html.js'

export interface RunPath {
  /** Node ids the run passed, in order. */
  nodes: string[]
  /** `from->port` of every edge the run took. */
  edges: Set<string>
  failedNodeId: string | null
}

interface LaidOutNode {
  id: string
  type: string
  name: string
  /** Attempts in all, when the node has `retry` (drawn as `×3`). */
  attempts: number | null
  /** The flow a call or each node runs. */
  calls: string | null
  x: number
  y: number
  width: number
  height: number
}

interface LaidOutEdge {
  from: string
  to: string
  port: string
  points: { x: number; y: number }[]
  label: { x: number; y: number } | null
}

interface Layout {
  width: number
  height: number
  nodes: LaidOutNode[]
  edges: LaidOutEdge[]
}

const NODE_HEIGHT = 46
const CHAR_WIDTH = 7.4
/** The kind line is smaller capitals. */
const KIND_CHAR_WIDTH = 6.6
const FAILED_MARK = ' · FAILED'
const MARGIN = 16

/** Colours per kind, so the eye finds the Start, branches and writes at once. */
const KIND_COLORS: Record<string, string> = {
  start: '#2f855a',
  end: '#4a5568',
  if: '#b7791f',
  switch: '#b7791f',
  insert: '#2b6cb0',
  set: '#6b46c1',
  http: '#c05621',
}

const layouts = new WeakMap<Flow, Layout>()

function layoutOf(flow: Flow): Layout {
  const cached = layouts.get(flow)
  if (cached) return cached
  const graph = new dagre.graphlib.Graph({ multigraph: true })
  graph.setGraph({ rankdir: 'LR', nodesep: 26, ranksep: 56, edgesep: 14, marginx: MARGIN, marginy: MARGIN })
  graph.setDefaultEdgeLabel(() => ({}))
  for (const node of flow.nodes) {
    // A retry badge sits at the end of the name line: room for it beside the name.
    const nameChars = node.name.length + (node.settings.retry === undefined ? 0 : 4)
    const width = Math.max(110, Math.min(260, Math.max(nameChars, kindLabel(node).length + 4) * CHAR_WIDTH + 28))
    graph.setNode(node.id, { width, height: NODE_HEIGHT })
  }
  for (const node of flow.nodes) {
    const ports = Object.keys(node.next)
    for (const port of ports) {
      const target = node.next[port]!
      if (!flow.nodesById.has(target)) continue
      const labelled = !(ports.length === 1 && port === 'out')
      graph.setEdge(node.id, target, labelled ? { label: port, width: port.length * 6.5 + 8, height: 14, labelpos: 'c' } : {}, `${node.id}->${port}`)
    }
  }
  dagre.layout(graph)
  const nodes: LaidOutNode[] = flow.nodes.map((node) => {
    const box = graph.node(node.id) as { x: number; y: number; width: number; height: number }
    const attempts = node.settings.retry === undefined ? null : retryOf(node.settings).attempts
    const calls = getNodeKind(node.type)?.calledFlow?.(node.parsed) ?? null
    return { id: node.id, type: node.type, name: node.name, attempts, calls, x: box.x, y: box.y, width: box.width, height: box.height }
  })
  const edges: LaidOutEdge[] = graph.edges().map((edge: { v: string; w: string; name?: string }) => {
    const data = graph.edge(edge) as { points: { x: number; y: number }[]; label?: string; x?: number; y?: number }
    const port = (edge.name ?? '').split('->').pop() ?? 'out'
    return {
      from: edge.v,
      to: edge.w,
      port,
      points: data.points,
      label: data.label !== undefined && data.x !== undefined && data.y !== undefined ? { x: data.x, y: data.y } : null,
    }
  })
  const size = graph.graph() as { width?: number; height?: number }
  const layout = { width: Math.ceil(size.width ?? 200), height: Math.ceil(size.height ?? 80), nodes, edges }
  layouts.set(flow, layout)
  return layout
}

export interface GraphOptions {
  path?: RunPath
  /** A small picture (the dashboard): no labels on edges, scaled into the card. */
  thumbnail?: boolean
  /** Accessible name of the picture. */
  title: string
  /** Makes call and each nodes links to the flow they run (not on thumbnails, which sit in a card). */
  projectId?: string
}

export function renderFlowGraph(flow: Flow, options: GraphOptions): SafeHtml {
  const layout = layoutOf(flow)
  const { path, thumbnail = false } = options
  const visited = new Set(path?.nodes ?? [])
  const edgeSvg = layout.edges.map((edge) => {
    const taken = path?.edges.has(`${edge.from}->${edge.port}`) ?? false
    const d = edge.points.map((point, i) => `${i === 0 ? 'M' : 'L'}${point.x.toFixed(1)},${point.y.toFixed(1)}`).join(' ')
    const label =
      edge.label && !thumbnail
        ? html`<g class="port"><rect x="${(edge.label.x - edge.port.length * 3.25 - 4).toFixed(1)}" y="${(edge.label.y - 8).toFixed(1)}" width="${(edge.port.length * 6.5 + 8).toFixed(1)}" height="16" rx="3"/><text x="${edge.label.x.toFixed(1)}" y="${(edge.label.y + 4).toFixed(1)}">${edge.port}</text></g>`
        : ''
    return html`<g class="edge${taken ? ' taken' : ''}" data-from="${edge.from}" data-port="${edge.port}"><path d="${d}" marker-end="url(#arrow${taken ? '-taken' : ''})"/>${label}</g>`
  })
  const nodeSvg = layout.nodes.map((node) => {
    const x = node.x - node.width / 2
    const y = node.y - node.height / 2
    const failed = path?.failedNodeId === node.id
    const state = failed ? ' failed' : visited.has(node.id) ? ' visited' : path ? ' skipped' : ''
    const color = KIND_COLORS[node.type] ?? '#2d3748'
    const kind = `${node.type.toUpperCase()}${node.calls ? ` → ${node.calls}` : ''}`
    const kindChars = Math.floor((node.width - 24) / KIND_CHAR_WIDTH) - (failed ? FAILED_MARK.length : 0)
    const retry =
      node.attempts === null ? '' : html`<text class="retry" x="${(x + node.width - 8).toFixed(1)}" y="${(y + 35).toFixed(1)}">×${node.attempts}</text>`
    const nameChars = Math.floor((node.width - 24) / CHAR_WIDTH) - (node.attempts === null ? 0 : 4)
    const title = `${node.name} (${node.type}, id ${node.id})${node.calls ? `, runs flow ${node.calls}` : ''}${node.attempts === null ? '' : `, retry: ${node.attempts} attempts in all`}${failed ? ' — failed' : ''}`
    const shape = html`<g class="node${state}" data-node="${node.id}"><title>${title}</title>
<rect class="box" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${node.width.toFixed(1)}" height="${node.height}" rx="6"/>
<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="5" height="${node.height}" rx="2" fill="${color}"/>
<text class="kind" x="${(x + 13).toFixed(1)}" y="${(y + 17).toFixed(1)}" fill="${color}">${truncate(kind, kindChars)}${failed ? FAILED_MARK : ''}</text>
<text class="name" x="${(x + 13).toFixed(1)}" y="${(y + 35).toFixed(1)}">${truncate(node.name, nameChars)}</text>${retry}</g>`
    if (!node.calls || thumbnail || options.projectId === undefined) return shape
    const href = `/flows/${encodeURIComponent(options.projectId)}/${encodeURIComponent(node.calls)}`
    return html`<a class="calls" href="${href}">${shape}</a>`
  })
  const size = thumbnail
    ? html`width="100%" height="${Math.min(140, layout.height)}" preserveAspectRatio="xMidYMid meet"`
    : html`width="${layout.width}" height="${layout.height}"`
  return html`<svg class="flow-graph${thumbnail ? ' thumb' : ''}" role="img" aria-label="${options.title}" viewBox="0 0 ${layout.width} ${layout.height}" ${size} xmlns="http://www.w3.org/2000/svg">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8a94a6"/></marker>
<marker id="arrow-taken" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#2b6cb0"/></marker></defs>
${edgeSvg}${nodeSvg}</svg>`
}

/** The first line of a node's box: its kind, and the flow it runs for call and each. */
function kindLabel(node: FlowNode): string {
  const calls = getNodeKind(node.type)?.calledFlow?.(node.parsed) ?? null
  return `${node.type}${calls ? ` → ${calls}` : ''}`
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`
}

/** The path of a run from its stored steps: the nodes in order and the edges between them. */
export function runPathOf(steps: { nodeId: string; port: string | null }[], failedNodeId: string | null): RunPath {
  const edges = new Set<string>()
  for (const step of steps) if (step.port) edges.add(`${step.nodeId}->${step.port}`)
  return { nodes: steps.map((step) => step.nodeId), edges, failedNodeId }
}

/** CSS of the pictures, shared by every page that shows one. */
export const GRAPH_CSS = `
.flow-graph{display:block;max-width:100%;height:auto;font:12px system-ui,sans-serif}
.flow-graph .box{fill:#fff;stroke:#cbd2dc;stroke-width:1.2}
.flow-graph .kind{font-size:10px;font-weight:600;letter-spacing:.04em}
.flow-graph .name{font-size:13px;fill:#1a202c}
.flow-graph .edge path{fill:none;stroke:#8a94a6;stroke-width:1.4}
.flow-graph .port rect{fill:#f4f6f9;stroke:#dfe3ea}
.flow-graph .port text{font-size:10.5px;fill:#4a5568;text-anchor:middle}
.flow-graph .edge.taken path{stroke:#2b6cb0;stroke-width:3}
.flow-graph .edge.taken .port rect{fill:#ebf4ff;stroke:#2b6cb0}
.flow-graph .node.visited .box{stroke:#2b6cb0;stroke-width:2.5;fill:#f5f9ff}
.flow-graph .node.skipped{opacity:.45}
.flow-graph .node.failed .box{stroke:#c53030;stroke-width:3;fill:#fff5f5}
.flow-graph .node.failed .kind{fill:#c53030}
.flow-graph .retry{font-size:12px;font-weight:700;fill:#8a5a00;text-anchor:end}
.flow-graph a.calls .kind{text-decoration:underline}.flow-graph a.calls:hover .box{stroke:#1f5fae}
.flow-graph.thumb .name{font-size:13px}
`
