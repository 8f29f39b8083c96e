// The documents part of the store contract (SPEC §10), run by contract.ts on every store: the
// filter subset and its type rules, sorting and paging, update, delete, collections, indexes, and
// hostile values arriving through {{ references }}. Both stores must give exactly these answers.
import { randomBytes } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { resolveValue } from '../../src/language/resolve.js'
import { bindFilter, parseFilter, parseSort, type FilterNode } from '../../src/model/document-filter.js'
import type { Store } from '../../src/model/store.js'

/** The seed documents, by name. qty is a number except in "c" (a string); "d" and "e" hold hostile-looking values. */
const SEED: Record<string, Record<string, unknown>> = {
  a: { name: 'a', qty: 5, price: 2.5, status: 'open', tags: ['x'], customer: { id: 'c1', tier: 'gold' }, active: true },
  b: { name: 'b', qty: 10, status: 'shipped', customer: { id: 'c2' }, active: false, note: null },
  c: { name: 'c', qty: '5', status: 'open', customer: { id: 'c1' } },
  d: { name: 'd', status: { $ne: null } },
  e: { name: 'e', qty: 1, status: "' OR 1=1 --" },
  f: { name: 'f', qty: 7.5, status: 'closed', tags: ['x', 'y'], meta: { b: 1, a: 2 }, active: 1 },
}
const ALL = Object.keys(SEED)
const except = (...names: string[]) => ALL.filter((n) => !names.includes(n))

/** [what, filter as written, names of the matching documents]. */
const FILTER_CASES: [string, Record<string, unknown>, string[]][] = [
  ['an empty filter matches everything', {}, ALL],
  ['equality on a string', { status: 'open' }, ['a', 'c']],
  ['a number never equals a string', { qty: 5 }, ['a']],
  ['a string never equals a number', { qty: '5' }, ['c']],
  ['$eq', { qty: { $eq: 10 } }, ['b']],
  ['equality on a decimal', { price: 2.5 }, ['a']],
  ['$gt on numbers skips strings and missing fields', { qty: { $gt: 5 } }, ['b', 'f']],
  ['$gte', { qty: { $gte: 5 } }, ['a', 'b', 'f']],
  ['$lt with a string compares strings only', { qty: { $lt: '6' } }, ['c']],
  ['$lte', { qty: { $lte: 1 } }, ['e']],
  ['a range on one field', { qty: { $gt: 5, $lt: 10 } }, ['f']],
  ['string ranges in code-point order', { name: { $gte: 'b', $lt: 'd' } }, ['b', 'c']],
  ['a range with null matches nothing', { qty: { $gt: null } }, []],
  ['null matches null and missing', { note: null }, ALL],
  ['$exists true includes null', { note: { $exists: true } }, ['b']],
  ['$exists false', { note: { $exists: false } }, except('b')],
  ['$ne matches missing fields too', { status: { $ne: 'open' } }, ['b', 'd', 'e', 'f']],
  ['$ne on a number', { qty: { $ne: 5 } }, except('a')],
  ['$in', { status: { $in: ['open', 'closed'] } }, ['a', 'c', 'f']],
  ['$in with mixed types', { qty: { $in: [5, '5', 99] } }, ['a', 'c']],
  ['$in with null matches missing', { qty: { $in: [null] } }, ['d']],
  ['$in with an empty list', { qty: { $in: [] } }, []],
  ['$nin', { status: { $nin: ['open', 'closed'] } }, ['b', 'd', 'e']],
  ['dotted path', { 'customer.id': 'c1' }, ['a', 'c']],
  ['dotted path missing', { 'customer.tier': { $exists: false } }, except('a')],
  ['$or', { $or: [{ qty: 1 }, { status: 'shipped' }] }, ['b', 'e']],
  ['$and', { $and: [{ status: 'open' }, { 'customer.id': 'c1' }] }, ['a', 'c']],
  ['fields side by side are and-ed', { status: 'open', qty: 5 }, ['a']],
  ['top-level $not', { $not: { status: 'open' } }, ['b', 'd', 'e', 'f']],
  ['field $not includes missing fields', { qty: { $not: { $gt: 5 } } }, ['a', 'c', 'd', 'e']],
  ['true is not 1', { active: true }, ['a']],
  ['false is not 0', { active: false }, ['b']],
  ['1 is not true', { active: 1 }, ['f']],
  ['an array equals the same array', { tags: ['x'] }, ['a']],
  ['an array does not match one of its items', { tags: 'x' }, []],
  ['an object equals regardless of key order', { meta: { a: 2, b: 1 } }, ['f']],
  ['an object value is data, not operators', { status: { $eq: { $ne: null } } }, ['d']],
  ['quotes in values are data', { status: "' OR 1=1 --" }, ['e']],
]

function names(documents: unknown[]): string[] {
  return documents.map((d) => (d as { name: string }).name)
}

function bound(written: Record<string, unknown>, scope: Record<string, unknown> = {}): FilterNode {
  const { filter, problems } = parseFilter(written)
  expect(problems).toEqual([])
  // The real resolver, as a node's context would run it: templates in leaves become data.
  return bindFilter(filter, (value) => resolveValue(value, scope, new Map()))
}

export function describeDocumentsContract(stores: () => { store: Store; other: Store }): void {
  describe('documents', () => {
    const projectId = `p_${randomBytes(5).toString('hex')}`
    const ids: Record<string, string> = {}
    let store: Store

    beforeAll(async () => {
      store = stores().store
      for (const [name, doc] of Object.entries(SEED)) ids[name] = await store.documents.insert(projectId, 'items', doc)
      await store.documents.insert(projectId, 'other', { name: 'a', status: 'open' })
    })

    const find = async (written: Record<string, unknown>, sort: Record<string, unknown> = {}, limit = 100, skip = 0) =>
      store.documents.find(projectId, 'items', { filter: bound(written), sort: parseSort(sort).sort, limit, skip })

    it.each(FILTER_CASES)('find: %s', async (_what, written, expected) => {
      const result = await find(written, { name: 1 })
      expect(names(result.documents)).toEqual(expected)
      expect(result.count).toBe(expected.length)
    })

    it('gives documents back with _id first and the same key order on every store', async () => {
      const { documents } = await find({ name: 'f' })
      expect(documents).toEqual([{ _id: ids.f, ...SEED.f }])
      expect(Object.keys(documents[0] as object)).toEqual(['_id', 'qty', 'meta', 'name', 'tags', 'active', 'status'])
      expect(Object.keys((documents[0] as { meta: object }).meta)).toEqual(['a', 'b'])
    })

    it('compares strings with quotes, escapes and other scripts exactly, and big and small numbers by value', async () => {
      const p = `${projectId}_s`
      const values = ['line\n"quoted" \\ back', 'héllo wörld ✓ 日本', '\u2028\t', 1e21, -0.000001, 12345678901234, 0.1 + 0.2]
      for (const value of values) await store.documents.insert(p, 'c', { value })
      for (const value of values) {
        const result = await store.documents.find(p, 'c', { filter: bound({ value: '{{start.v}}' }, { start: { v: value } }), limit: 10 })
        expect({ value, found: result.documents.map((d) => (d as { value: unknown }).value) }).toEqual({ value, found: [value] })
      }
    })

    it('matches _id', async () => {
      expect(names((await find({ _id: ids.c! })).documents)).toEqual(['c'])
      expect(names((await find({ _id: { $in: [ids.a!, ids.e!, 'nope'] } }, { name: 1 })).documents)).toEqual(['a', 'e'])
      expect((await find({ _id: 5 })).count).toBe(0)
    })

    it('sorts across types like MongoDB (missing, numbers, strings) and pages with the count of all matches', async () => {
      expect(names((await find({}, { qty: 1, name: 1 })).documents)).toEqual(['d', 'e', 'a', 'f', 'b', 'c'])
      expect(names((await find({}, { qty: -1, name: 1 })).documents)).toEqual(['c', 'b', 'f', 'a', 'e', 'd'])
      expect(names((await find({}, { 'customer.id': -1, name: -1 })).documents)).toEqual(['b', 'c', 'a', 'f', 'e', 'd'])
      const page = await find({ status: { $ne: 'zzz' } }, { name: 1 }, 2, 1)
      expect(names(page.documents)).toEqual(['b', 'c'])
      expect(page.count).toBe(6)
      // The last page: not full (the page tells the count) and exactly full (it cannot), with a skip.
      expect(await find({ status: { $ne: 'zzz' } }, { name: 1 }, 2, 5)).toMatchObject({ count: 6, documents: [{ name: 'f' }] })
      expect(await find({ status: { $ne: 'zzz' } }, { name: 1 }, 2, 4)).toMatchObject({ count: 6, documents: [{ name: 'e' }, { name: 'f' }] })
      const pastTheEnd = await find({}, { name: 1 }, 2, 50)
      expect(pastTheEnd).toEqual({ documents: [], count: 6 })
      expect((await find({}, { name: 1 }, 0)).count).toBe(6)
    })

    it('keeps insertion order without a sort, and newest first when asked', async () => {
      expect(names((await find({})).documents)).toEqual(ALL)
      const newest = await store.documents.find(projectId, 'items', { filter: bound({}), limit: 3, newestFirst: true })
      expect(names(newest.documents)).toEqual(['f', 'e', 'd'])
    })

    describe('hostile values through {{ references }} stay data', () => {
      const hostile: [string, Record<string, unknown>, Record<string, unknown>, string[]][] = [
        ['an object that looks like an operator', { status: '{{start.status}}' }, { status: { $ne: null } }, ['d']],
        ['SQL in a string', { status: '{{start.status}}' }, { status: "' OR 1=1 --" }, ['e']],
        ['a $where object', { status: '{{start.status}}' }, { status: { $where: 'sleep(1000) || true' } }, []],
        ['an operator object inside $eq', { status: { $eq: '{{start.status}}' } }, { status: { $gt: '' } }, []],
        ['an operator object as a range bound', { qty: { $gt: '{{start.min}}' } }, { min: { $ne: null } }, []],
        ['operator objects inside a $in list', { status: { $in: '{{start.list}}' } }, { list: [{ $ne: null }, "' OR 1=1 --"] }, ['d', 'e']],
        ['a reference inside longer text', { status: 'x{{start.s}}' }, { s: "' OR '1'='1" }, []],
        ['a dotted path in data', { 'customer.id': '{{start.id}}' }, { id: "c1' OR 1=1 --" }, []],
      ]
      it.each(hostile)('%s', async (_what, written, start, expected) => {
        const filter = bound(written, { start })
        const result = await store.documents.find(projectId, 'items', { filter, sort: parseSort({ name: 1 }).sort, limit: 100 })
        expect(names(result.documents)).toEqual(expected)
        // ...and the same values cannot widen an update or a delete.
        expect(await store.documents.update(projectId, 'items', filter, { set: { touched: true }, unset: [] })).toEqual({
          matched: expected.length,
          modified: expected.length,
        })
        expect(await store.documents.update(projectId, 'items', filter, { set: {}, unset: ['touched'] })).toEqual({
          matched: expected.length,
          modified: expected.length,
        })
      })
    })

    it('lists collections with counts', async () => {
      expect(await store.documents.listCollections(projectId)).toEqual([
        { collection: 'items', count: 6 },
        { collection: 'other', count: 1 },
      ])
      expect(await store.documents.listCollections(`${projectId}_none`)).toEqual([])
    })

    it('creates expression indexes idempotently, and queries still answer the same', async () => {
      const indexes = { items: [['status'], ['customer', 'id']], other: [['status']] }
      await store.documents.ensureIndexes(indexes)
      await store.documents.ensureIndexes(indexes)
      await stores().other.documents.ensureIndexes(indexes)
      expect(names((await find({ status: 'open' }, { name: 1 })).documents)).toEqual(['a', 'c'])
      expect(names((await find({ 'customer.id': 'c1', qty: 5 })).documents)).toEqual(['a'])
    })

    it('updates: set merges top-level fields, unset removes, modified counts real changes', async () => {
      const p = `${projectId}_u`
      const one = await store.documents.insert(p, 'c', { n: 1, status: 'open', keep: { deep: [1] }, drop: 'x' })
      const two = await store.documents.insert(p, 'c', { n: 2, status: 'open' })
      await store.documents.insert(p, 'c', { n: 3, status: 'closed' })
      const list = await store.documents.insert(p, 'c', [1, 2])
      const open = bound({ status: 'open' })
      expect(await store.documents.update(p, 'c', open, { set: { status: 'done', extra: { a: null } }, unset: ['drop', 'absent'] })).toEqual({
        matched: 2,
        modified: 2,
      })
      expect(await store.documents.get(p, 'c', one)).toEqual({ _id: one, n: 1, status: 'done', keep: { deep: [1] }, extra: { a: null } })
      expect(await store.documents.get(p, 'c', two)).toEqual({ _id: two, n: 2, status: 'done', extra: { a: null } })
      expect(await store.documents.update(p, 'c', open, { set: { status: 'again' }, unset: [] })).toEqual({ matched: 0, modified: 0 })
      // The same values again: matched, not modified.
      expect(await store.documents.update(p, 'c', bound({ _id: one }), { set: { status: 'done', n: 1 }, unset: ['nope'] })).toEqual({ matched: 1, modified: 0 })
      // _id cannot be set; a document that is not an object is never matched.
      expect(await store.documents.update(p, 'c', bound({ _id: one }), { set: { _id: 'other', n: 9 }, unset: [] })).toEqual({ matched: 1, modified: 1 })
      expect(await store.documents.get(p, 'c', one)).toMatchObject({ _id: one, n: 9 })
      expect(await store.documents.update(p, 'c', bound({ _id: list }), { set: { n: 1 }, unset: [] })).toEqual({ matched: 0, modified: 0 })
      expect(await store.documents.get(p, 'c', list)).toEqual([1, 2])
    })

    it('deletes only what the filter picks', async () => {
      const p = `${projectId}_d`
      for (const doc of Object.values(SEED)) await store.documents.insert(p, 'c', doc)
      await store.documents.insert(p, 'keep', { qty: 10 })
      expect(await store.documents.delete(p, 'c', bound({ qty: { $gte: 5 } }))).toBe(3)
      const left = await store.documents.find(p, 'c', { filter: bound({}), sort: parseSort({ name: 1 }).sort, limit: 100 })
      expect(names(left.documents)).toEqual(['c', 'd', 'e'])
      expect(await store.documents.delete(p, 'c', bound({ status: '{{start.s}}' }, { start: { s: { $ne: null } } }))).toBe(1)
      expect(await store.documents.delete(p, 'c', bound({ status: 'nothing' }))).toBe(0)
      expect(await store.documents.listCollections(p)).toEqual([
        { collection: 'c', count: 2 },
        { collection: 'keep', count: 1 },
      ])
    })
  })
}
