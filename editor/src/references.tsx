// The reference picker: the `{{ ref.field }}` a node may use are those of the nodes upstream of it
// (and `run`). Clicking one inserts it into the settings field that last had the focus.
import type { Graph, GraphNode } from './document.js'
import { refName, upstreamOf } from './document.js'

function fieldsOf(node: GraphNode): string[] {
  const keys = (value: unknown): string[] => (value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [])
  if (node.type === 'start') {
    const inputs = (node.settings.inputs ?? {}) as Record<string, { properties?: unknown }>
    return Object.values(inputs).flatMap((schema) => keys(schema?.properties))
  }
  const values = node.settings.values
  return keys(values)
}

function referencesOf(graph: Graph, id: string): { node: string; refs: string[] }[] {
  const groups = upstreamOf(graph, id).map((node) => {
    const root = refName(node.name)
    return { node: node.name, refs: [root, ...fieldsOf(node).map((field) => `${root}.${field}`)] }
  })
  return [...groups, { node: 'run', refs: ['run.id', 'run.startedAt', 'run.trigger'] }]
}

export function ReferencePicker({ graph, nodeId, onPick }: { graph: Graph; nodeId: string; onPick(text: string): void }) {
  const groups = referencesOf(graph, nodeId)
  return (
    <div className="refs" aria-label="References">
      <h4>References upstream</h4>
      {groups.length === 1 ? <p className="hint">No node leads here yet: connect one to use its output.</p> : null}
      {groups.map((group) => (
        <div key={group.node} className="ref-group">
          <span className="ref-node">{group.node}</span>
          {group.refs.map((ref) => (
            <button type="button" key={ref} className="ref" data-ref={ref} onMouseDown={(e) => e.preventDefault()} onClick={() => onPick(`{{ ${ref} }}`)}>
              {ref}
            </button>
          ))}
        </div>
      ))}
    </div>
  )
}
