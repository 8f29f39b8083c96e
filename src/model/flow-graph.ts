// Reachability in a flow's graph: the one walk that validate (unreachable nodes, what runs before
// what) and the OpenAPI generator (which Ends answer) share. The caller says which edges leave a node,
// since which ports count depends on the question.

export interface Reach {
  /** Ids reached from the start, the start included, in the order they were first reached. */
  reached: Set<string>
  /** Whether some reached node has an edge to nothing (a port without a next node). */
  open: boolean
}

/**
 * Breadth-first from `startId`. `edgesOf(id)` lists a node's targets; an undefined target is a port
 * with no edge (the run ends there, answering 204).
 */
export function reachableFrom(startId: string, edgesOf: (id: string) => Iterable<string | undefined>): Reach {
  const reached = new Set<string>([startId])
  const queue = [startId]
  let open = false
  for (let index = 0; index < queue.length; index++) {
    for (const target of edgesOf(queue[index]!)) {
      if (target === undefined) open = true
      else if (!reached.has(target)) {
        reached.add(target)
        queue.push(target)
      }
    }
  }
  return { reached, open }
}

/** For each reached node, the reached nodes that run before it on some path (what `{{ ref }}` may name). */
export function upstreamOf(reached: Set<string>, incomingOf: (id: string) => readonly string[]): Map<string, Set<string>> {
  const upstream = new Map<string, Set<string>>()
  for (const id of reached) {
    const before = new Set<string>()
    const queue = [...incomingOf(id)]
    for (let from = queue.shift(); from !== undefined; from = queue.shift()) {
      if (before.has(from) || !reached.has(from)) continue
      before.add(from)
      queue.push(...incomingOf(from))
    }
    upstream.set(id, before)
  }
  return upstream
}
