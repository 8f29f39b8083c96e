// The node kinds flowctl knows. Adding a kind: a file beside this one and a line here.
import { endNode } from './end.js'
import { httpNode } from './http.js'
import { ifNode } from './if.js'
import { insertNode } from './insert.js'
import { setNode } from './set.js'
import { startNode } from './start.js'
import { switchNode } from './switch.js'
import type { NodeKind } from './types.js'

export const nodeKinds: ReadonlyMap<string, NodeKind> = new Map(
  [startNode, endNode, ifNode, switchNode, insertNode, setNode, httpNode].map((kind) => [kind.type, kind]),
)

export function getNodeKind(type: string): NodeKind | undefined {
  return nodeKinds.get(type)
}
