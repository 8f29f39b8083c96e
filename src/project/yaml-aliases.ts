// Whether js-yaml may expand a file's aliases: only when yaml, the reference, would expand them to
// the same data. yaml refuses an alias bomb ("billion laughs") by counting expansions as it builds
// the data (`toJS({ maxAliasCount })`); js-yaml has no such count, so the count is replayed here on
// js-yaml's events, step for step as yaml's `Alias.resolve` and `getAliasCount` (yaml 2.x) do it.
// Anything outside what the two provably read alike (an alias inside its own anchor, an alias or a
// collection as a map key) is left to yaml too. test/project/plain-yaml.test.ts compares both readers.
import { EVENT_ID, type Event } from 'js-yaml'

/** yaml's bookkeeping of one anchored node while it builds the data: the same fields, the same rules. */
interface AnchorData {
  /** 1 for the anchored node itself, +1 per alias expanded so far. */
  count: number
  /** yaml's `getAliasCount` of the node, worked out at its first alias (again while it is 0). */
  aliasCount: number
  /** The index just past the node's events; -1 while a collection is still open. */
  end: number
}

/**
 * True when yaml would expand every alias of the document (with `maxAliasCount`) and js-yaml builds
 * the same data from them: each alias names an anchor set earlier and already closed, no alias or
 * collection is a map key (when the document holds an alias), and yaml's expansion count stays within
 * the limit. A document without aliases is always expandable.
 */
export function aliasesExpandAsYaml(events: readonly Event[], text: string, maxAliasCount: number): boolean {
  if (!events.some((event) => event.type === EVENT_ID.ALIAS)) return true
  const anchors = new Map<string, number>() // anchor name → index of the last node that set it
  const data = new Map<number, AnchorData>() // index of an anchored node → yaml's bookkeeping
  const resolved = new Map<number, number>() // index of an alias → index of its anchored node
  // Open collections: their index and, for a map, how many keys and values came so far.
  const open: { index: number; entries: number; isMap: boolean }[] = []
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (event.type === EVENT_ID.DOCUMENT) continue
    if (event.type === EVENT_ID.POP) {
      const closed = open.pop()
      const anchored = closed && data.get(closed.index)
      if (anchored) anchored.end = i + 1
      continue
    }
    const parent = open.at(-1)
    if (parent?.isMap && parent.entries++ % 2 === 0 && event.type !== EVENT_ID.SCALAR) return false
    if (event.type === EVENT_ID.ALIAS) {
      const target = anchors.get(text.slice(event.anchorStart, event.anchorEnd))
      const anchored = target === undefined ? undefined : data.get(target)
      // Unknown anchors are js-yaml's refusal already; an alias inside its own anchor builds a cycle.
      if (target === undefined || !anchored || anchored.end < 0) return false
      resolved.set(i, target)
      anchored.count += 1
      if (anchored.aliasCount === 0) anchored.aliasCount = aliasCountOf(events, target, data, resolved).count
      if (anchored.count * anchored.aliasCount > maxAliasCount) return false
      continue
    }
    const isCollection = event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE
    if (event.anchorStart >= 0) {
      anchors.set(text.slice(event.anchorStart, event.anchorEnd), i)
      data.set(i, { count: 1, aliasCount: 0, end: isCollection ? -1 : i + 1 })
    }
    if (isCollection) open.push({ index: i, entries: 0, isMap: event.type === EVENT_ID.MAPPING })
  }
  return true
}

/**
 * yaml's `getAliasCount` of the node at `at`: 1 for a scalar, an alias's anchor count × alias count,
 * the largest of its items for a collection (0 when empty). `next` is the index just past the node.
 */
function aliasCountOf(events: readonly Event[], at: number, data: Map<number, AnchorData>, resolved: Map<number, number>): { count: number; next: number } {
  const event = events[at]!
  if (event.type === EVENT_ID.ALIAS) {
    const anchored = data.get(resolved.get(at)!)
    return { count: anchored ? anchored.count * anchored.aliasCount : 0, next: at + 1 }
  }
  if (event.type !== EVENT_ID.MAPPING && event.type !== EVENT_ID.SEQUENCE) return { count: 1, next: at + 1 }
  let count = 0
  let next = at + 1
  while (next < events.length && events[next]!.type !== EVENT_ID.POP) {
    const item = aliasCountOf(events, next, data, resolved)
    count = Math.max(count, item.count)
    next = item.next
  }
  return { count, next: next + 1 }
}
