// The node kinds flowctl knows. Adding a kind: a file beside this one (`defineNodeKind`) and a line here.
import { COMMON_SETTINGS } from './retry.js'
import { callNode } from './call.js'
import { deleteNode } from './delete.js'
import { eachNode } from './each.js'
import { endNode } from './end.js'
import { findNode } from './find.js'
import { getNode } from './get.js'
import { httpNode } from './http.js'
import { ifNode } from './if.js'
import { insertNode } from './insert.js'
import { setNode } from './set.js'
import { startNode } from './start/kind.js'
import { switchNode } from './switch.js'
import type { NodeKind } from './types.js'
import type { ParsedSettings } from '../model/project.js'
import { updateNode } from './update.js'
import { waitNode } from './wait.js'

// Each kind has its own settings type; the registry holds them as opaque ParsedSettings.
const builtinKinds: NodeKind<any>[] = [
  startNode,
  endNode,
  ifNode,
  switchNode,
  insertNode,
  setNode,
  httpNode,
  getNode,
  findNode,
  updateNode,
  deleteNode,
  callNode,
  eachNode,
  waitNode,
]

/** Every kind but start and end also takes `retry` and `onError` (SPEC §13). */
function withCommonSettings<S>(kind: NodeKind<S>): NodeKind<S> {
  if (kind.noCommonSettings) return kind
  const schema = kind.settingsSchema as { properties?: Record<string, unknown> }
  return { ...kind, settingsSchema: { ...kind.settingsSchema, properties: { ...schema.properties, ...COMMON_SETTINGS } } }
}

const registered = new Map<string, NodeKind>()

/** Every known kind by type, in registration order (the published schema and messages follow it). */
export const nodeKinds: ReadonlyMap<string, NodeKind> = registered

export function getNodeKind(type: string): NodeKind | undefined {
  return registered.get(type)
}

/** What a node of a type no kind has holds: nothing reads it, since its flow has a load error. */
const NO_KIND_SETTINGS = Object.freeze({}) as unknown as ParsedSettings

/** A node's typed settings, by its kind (`FlowNode.parsed`); the loader's one call per node. */
export function parseNodeSettings(kind: NodeKind | undefined, settings: Record<string, unknown>): ParsedSettings {
  return kind ? kind.parseSettings(settings) : NO_KIND_SETTINGS
}

/**
 * Adds a node kind: the one line a new kind needs (below, for built-in kinds). Flows loaded after this
 * may use it. Its settings schema is compiled on first use (only built-in kinds are precompiled).
 */
export function registerNodeKind<S>(kind: NodeKind<S>): NodeKind<S> {
  if (!/^[a-z][a-zA-Z0-9]*$/.test(kind.type))
    throw new Error(`node kind type "${kind.type}" must be a word of letters and digits starting with a lower-case letter`)
  if (registered.has(kind.type)) throw new Error(`node kind "${kind.type}" is already registered`)
  if (kind.terminates && kind.ports(kind.parseSettings({})).length > 0) throw new Error(`node kind "${kind.type}" terminates the run, so it can have no ports`)
  const complete = withCommonSettings(kind)
  registered.set(kind.type, complete as unknown as NodeKind)
  return complete
}

for (const kind of builtinKinds) registerNodeKind(kind)
