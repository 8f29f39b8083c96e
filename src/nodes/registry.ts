// The node kinds flowctl knows. Adding a kind: a file beside this one and a line here.
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
import { startNode } from './start.js'
import { switchNode } from './switch.js'
import type { NodeKind } from './types.js'
import { updateNode } from './update.js'
import { waitNode } from './wait.js'

const kinds = [startNode, endNode, ifNode, switchNode, insertNode, setNode, httpNode, getNode, findNode, updateNode, deleteNode, callNode, eachNode, waitNode]

/** Every kind but start and end also takes `retry` and `onError` (SPEC §13). */
function withCommonSettings(kind: NodeKind): NodeKind {
  if (kind === startNode || kind === endNode) return kind
  const schema = kind.settingsSchema as { properties?: Record<string, unknown> }
  return { ...kind, settingsSchema: { ...kind.settingsSchema, properties: { ...schema.properties, ...COMMON_SETTINGS } } }
}

export const nodeKinds: ReadonlyMap<string, NodeKind> = new Map(kinds.map((kind) => [kind.type, withCommonSettings(kind)]))

export function getNodeKind(type: string): NodeKind | undefined {
  return nodeKinds.get(type)
}
