// `defineNodeKind`: how a kind is written. Its settings are parsed once, when the project loads,
// into the kind's own typed value `S`; `ports`, `calledFlow`, `openapi` and `execute` receive that
// value instead of reading the settings as written. Like nitro's `defineNitroPreset`, it mostly lets
// TypeScript infer `S` from `parseSettings` and check the rest of the kind against it.
import type { NodeContext, NodeKind, NodeResult } from './types.js'

/** A kind as its file writes it: `execute` takes the typed settings beside the context. */
export type NodeKindDefinition<S> = Omit<NodeKind<S>, 'execute'> & {
  execute(context: NodeContext, settings: S): Promise<NodeResult>
}

/** The kind the registry holds: `execute` is handed the settings the loader parsed (`node.parsed`). */
export function defineNodeKind<S>(definition: NodeKindDefinition<S>): NodeKind<S> {
  const { execute } = definition
  // The loader set `parsed` from this kind's own parseSettings: it is this kind's S.
  return { ...definition, execute: (context) => execute(context, context.node.parsed as unknown as S) }
}
