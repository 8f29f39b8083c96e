// The difference between a Document and the value it should now hold, applied in place: nodes
// whose value is unchanged are kept as they are (with their comments, quoting, flow or block style
// and blank lines), maps keep their key order (new keys go last), and a changed scalar keeps its
// quoting. Lists of objects with an `id` (the nodes of a flow) are matched by id, other lists by
// their longest common run of equal items.
import { isDeepStrictEqual } from 'node:util'
import { diffArrays } from 'diff'
import { isCollection, isMap, isNode, isScalar, isSeq, Scalar, type Document, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml'
import { isRecord } from '../../internal/is-record.js'

/** Aliases a Document may expand when it is compared (the loader's limit). */
const MAX_ALIAS_COUNT = 1000

type Plain = Record<string, unknown>

const MAX_LIST_EDITS = 500

export interface PatchOptions {
  /** New id → old id of renamed items of id lists, so a renamed node keeps its comments. */
  previousIds?: ReadonlyMap<string, string>
}

/** Makes `doc` hold `value`, changing as few of its nodes as it can. */
export function patchDocument(doc: Document, value: unknown, options: PatchOptions = {}): void {
  const patcher = new Patcher(doc, options.previousIds ?? new Map())
  doc.contents = patcher.patch(doc.contents, value) as Node
  // Anchors shared between places can make a patched value show up elsewhere: then the value is
  // written out whole (correct first, minimal second).
  if (!isDeepStrictEqual(doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), value)) doc.contents = doc.createNode(value) as Node
}

class Patcher {
  constructor(
    private readonly doc: Document,
    private readonly previousIds: ReadonlyMap<string, string>,
  ) {}

  patch(node: unknown, value: unknown): unknown {
    if (isNode(node) && isDeepStrictEqual(node.toJS(this.doc, { maxAliasCount: MAX_ALIAS_COUNT }), value)) return node
    if (isMap(node) && isRecord(value)) return this.patchMap(node, value)
    if (isSeq(node) && Array.isArray(value)) return this.patchSeq(node, value)
    if (isScalar(node) && !isCollectionValue(value)) return patchScalar(node, value)
    return this.replace(node, value, node)
  }

  private patchMap(map: YAMLMap, value: Plain): YAMLMap {
    const wanted = new Map(Object.entries(value))
    const kept: Pair[] = []
    for (const pair of map.items) {
      const key = keyText(pair.key)
      if (!wanted.has(key)) continue
      pair.value = this.patch(pair.value, wanted.get(key))
      wanted.delete(key)
      kept.push(pair)
    }
    for (const [key, item] of wanted) kept.push(this.doc.createPair(key, item))
    map.items = kept
    return map
  }

  private patchSeq(seq: YAMLSeq, value: unknown[]): YAMLSeq {
    const old = seq.items
    seq.items = isIdList(old, value) ? this.matchById(old, value) : this.matchByContent(old, value)
    return seq
  }

  /**
   * Items with an id keep their node (moved, renamed or changed); a new id takes the node of a gone
   * id of the same type (an id edited with other settings), else it is a new node.
   */
  private matchById(old: unknown[], value: unknown[]): unknown[] {
    const byId = new Map(old.map((item) => [idOf(item), item]))
    const matched = value.map((item) => {
      const id = (item as Plain).id as string
      const previous = byId.get(this.previousIds.get(id) ?? id)
      if (previous !== undefined) byId.delete(idOf(previous))
      return previous
    })
    return value.map((item, i) => {
      let previous = matched[i]
      if (previous === undefined) {
        previous = [...byId.values()].find((node) => isMap(node) && node.get('type') === (item as Plain).type)
        if (previous !== undefined) byId.delete(idOf(previous))
      }
      if (previous !== undefined) return this.patch(previous, item)
      const created = this.replace(undefined, item, old[0])
      // Nodes separated by blank lines: a new one too.
      created.spaceBefore = old.slice(1).filter((node) => isNode(node) && node.spaceBefore).length * 2 > old.length - 1 || undefined
      return created
    })
  }

  /** Equal items stay; a run of removed items facing a run of added ones is patched pairwise. */
  private matchByContent(old: unknown[], value: unknown[]): unknown[] {
    const oldValues = old.map((item) => (isNode(item) ? item.toJS(this.doc, { maxAliasCount: MAX_ALIAS_COUNT }) : item))
    // Past MAX_LIST_EDITS differences the items are patched by position (a diff costs items × differences).
    const changes = diffArrays(oldValues, value, { comparator: isDeepStrictEqual, maxEditLength: MAX_LIST_EDITS }) ?? [
      { removed: true, added: false, count: old.length, value: oldValues },
      { removed: false, added: true, count: value.length, value },
    ]
    const items: unknown[] = []
    let i = 0
    let j = 0
    for (let c = 0; c < changes.length; c++) {
      const change = changes[c]!
      if (!change.added && !change.removed) {
        items.push(...old.slice(i, i + change.count))
        i += change.count
        j += change.count
        continue
      }
      const removed = change.removed ? change.count : 0
      const next = changes[c + 1]
      const added = change.added ? change.count : next?.added ? next.count : 0
      if (change.removed && next?.added) c++
      for (let k = 0; k < added; k++) items.push(k < removed ? this.patch(old[i + k], value[j + k]) : this.replace(undefined, value[j + k], old[0]))
      i += removed
      j += added
    }
    return items
  }

  /** A new node for `value`, with the comments of the one it replaces and the style of a sibling. */
  private replace(previous: unknown, value: unknown, sibling: unknown): Node {
    const flow = isCollection(sibling) && sibling.flow === true
    const created = this.doc.createNode(value, flow ? { flow: true } : {}) as Node
    if (isNode(previous)) {
      created.commentBefore = previous.commentBefore
      created.comment = previous.comment
      created.spaceBefore = previous.spaceBefore
    }
    return created
  }
}

/** A scalar keeps its node: its quoting stays when it still fits (yaml quotes a plain `true` string). */
function patchScalar(node: Scalar, value: unknown): Scalar {
  if (typeof node.value !== typeof value || node.value === null || value === null) {
    node.type = undefined
    node.format = undefined
  }
  // A one-line text written as a block scalar (`|`, `>`) goes back to a plain or quoted one.
  if ((node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED) && !String(value).includes('\n')) node.type = undefined
  node.minFractionDigits = undefined
  node.value = value
  return node
}

function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key)
}

function idOf(item: unknown): string | undefined {
  if (!isMap(item)) return undefined
  const id = item.get('id')
  return typeof id === 'string' ? id : undefined
}

/** Both lists hold only maps with a text `id`, unique on each side: the nodes of a flow. */
function isIdList(old: unknown[], value: unknown[]): boolean {
  const oldIds = old.map(idOf)
  const newIds = value.map((item) => (isRecord(item) && typeof item.id === 'string' ? item.id : undefined))
  const unique = (ids: (string | undefined)[]) => ids.every((id) => id !== undefined) && new Set(ids).size === ids.length
  return old.length > 0 && value.length > 0 && unique(oldIds) && unique(newIds)
}

function isCollectionValue(value: unknown): boolean {
  return value !== null && typeof value === 'object'
}
