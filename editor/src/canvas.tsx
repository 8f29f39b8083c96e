// The canvas view: React Flow over the graph read from the document. A node shows its kind, name
// and a handle per port; dragging from a port to a node sets `next`; deleting an edge or a node
// changes the document the same way. A run's path is drawn over it (passed nodes and edges green,
// the failed node red).
import { Background, Controls, Handle, Position, ReactFlow, type Connection, type Edge, type Node, type NodeProps } from '@xyflow/react'
import { memo, useMemo, useRef, useState } from 'react'
import type { Graph, GraphNode } from './document.js'
import { layoutGraph } from './layout.js'

export interface RunPath {
  nodes: Set<string>
  /** `from->port` of each edge taken. */
  edges: Set<string>
  failed: string | null
}

type FlowNodeData = { node: GraphNode; ports: string[]; state: 'passed' | 'failed' | null; problem: boolean }
type CanvasNode = Node<FlowNodeData, 'flow'>

const FlowNodeView = memo(function FlowNodeView({ data, selected }: NodeProps<CanvasNode>) {
  const { node, ports, state, problem } = data
  const classes = ['fc-node', `kind-${node.type}`, selected ? 'selected' : '', state ?? '', problem ? 'problem' : ''].join(' ')
  return (
    <div className={classes} data-node-id={node.id}>
      {node.type !== 'start' && <Handle type="target" position={Position.Left} className="fc-in" />}
      <div className="fc-kind">{node.type}</div>
      <div className="fc-name">{node.name}</div>
      <div className="fc-ports">
        {ports.map((port, i) => (
          <div className="fc-port" key={port} style={{ top: `${((i + 1) * 100) / (ports.length + 1)}%` }}>
            {(ports.length > 1 || port !== 'out') && <span className="fc-port-label">{port}</span>}
            <Handle type="source" id={port} position={Position.Right} className="fc-out" data-port={port} />
          </div>
        ))}
      </div>
    </div>
  )
})

const NODE_TYPES = { flow: FlowNodeView }

export interface CanvasProps {
  graph: Graph
  portsOf(node: GraphNode): string[]
  selected: string | null
  path: RunPath | null
  problemNodes: Set<string>
  onSelect(id: string | null): void
  onConnect(from: string, port: string, to: string): void
  onDisconnect(from: string, port: string): void
  onRemove(id: string): void
}

export function Canvas(props: CanvasProps) {
  const { graph, portsOf, selected, path, problemNodes } = props
  // Places the user dragged nodes to (not saved: the file holds no positions).
  const dragged = useRef(new Map<string, { x: number; y: number }>())
  const [, redraw] = useState(0)
  const shape = graph.nodes.map((n) => `${n.id}>${Object.entries(n.next).join(',')}`).join(';')
  const laidOut = useMemo(() => layoutGraph(graph), [shape])

  const nodes: CanvasNode[] = graph.nodes.map((node) => ({
    id: node.id,
    type: 'flow',
    position: dragged.current.get(node.id) ?? laidOut.get(node.id) ?? { x: 0, y: 0 },
    selected: node.id === selected,
    data: {
      node,
      ports: portsOf(node),
      state: path?.failed === node.id ? 'failed' : path?.nodes.has(node.id) ? 'passed' : null,
      problem: problemNodes.has(node.id),
    },
  }))
  const ids = new Set(graph.nodes.map((n) => n.id))
  const edges: Edge[] = graph.nodes.flatMap((node) =>
    Object.entries(node.next)
      .filter(([, target]) => ids.has(target))
      .map(([port, target]) => {
        const taken = path?.edges.has(`${node.id}->${port}`) ?? false
        return {
          id: `${node.id}->${port}`,
          source: node.id,
          sourceHandle: port,
          target,
          className: taken ? 'taken' : '',
          ariaLabel: `edge from ${node.id} port ${port} to ${target}`,
          animated: taken,
        }
      }),
  )

  return (
    <ReactFlow
      nodes={nodes}
      edges={edges}
      nodeTypes={NODE_TYPES}
      fitView
      minZoom={0.2}
      proOptions={{ hideAttribution: true }}
      deleteKeyCode={['Delete', 'Backspace']}
      onNodesChange={(changes) => {
        for (const change of changes) {
          if (change.type === 'position' && change.position) dragged.current.set(change.id, change.position)
          if (change.type === 'remove') props.onRemove(change.id)
        }
        if (changes.some((c) => c.type === 'position')) redraw((n) => n + 1)
      }}
      onEdgesChange={(changes) => {
        for (const change of changes) {
          if (change.type !== 'remove') continue
          const [from, port] = change.id.split('->')
          if (from && port) props.onDisconnect(from, port)
        }
      }}
      onConnect={(connection: Connection) => {
        if (connection.source && connection.target && connection.sourceHandle) props.onConnect(connection.source, connection.sourceHandle, connection.target)
      }}
      onNodeClick={(_, node) => props.onSelect(node.id)}
      onPaneClick={() => props.onSelect(null)}
    >
      <Background gap={16} />
      <Controls showInteractive={false} />
    </ReactFlow>
  )
}
