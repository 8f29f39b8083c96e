// The palette: every registered node kind with its description. Clicking one adds a node of that
// kind (with its required settings left to the form), selected so its form opens at once.
import type { NodeKindInfo } from './api.js'

export function Palette({ kinds, onAdd }: { kinds: NodeKindInfo[]; onAdd(kind: NodeKindInfo): void }) {
  return (
    <nav className="palette" aria-label="Node kinds">
      <h4>Add a node</h4>
      {kinds.map((kind) => (
        <button type="button" key={kind.type} className={`kind kind-${kind.type}`} data-kind={kind.type} title={kind.description} onClick={() => onAdd(kind)}>
          <strong>{kind.type}</strong>
          <span>{kind.description}</span>
        </button>
      ))}
    </nav>
  )
}
