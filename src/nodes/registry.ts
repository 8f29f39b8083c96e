// The node kinds flowctl knows. Adding a kind: a file beside this one and a line here.
import { deleteNode } from './delete.js'
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

export const nodeKinds: ReadonlyMap<string, NodeKind> = new Map(
  [startNode, endNode, ifNode, switchNode, insertNode, setNode, httpNode, getNode, findNode, updateNode, deleteNode].map((kind) => [kind.type, kind]),
)

export function getNodeKind(type: string): NodeKind | undefined {
  return nodeKinds.get(type)
}
