// The document node kinds on a real (in-memory SQLite) store, with the real resolver: ports,
// outputs, references in ids, filters, limits and sets, and the run-time failures of bad values.
// Both stores' query semantics are proven by the store contract (test/store/documents-contract.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteNode } from '../../src/nodes/delete.js'
import { findNode } from '../../src/nodes/find.js'
import { getNode } from '../../src/nodes/get.js'
import { updateNode } from '../../src/nodes/update.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'
import { nodeContext } from './context.js'
import { settingsCheckContext } from '../../src/project/check-context.js'

const NO_CONTEXT = settingsCheckContext(undefined)

let store: Store
const ids: string[] = []
beforeAll(async () => {
  store = await openSqliteStore(':memory:')
  for (let i = 1; i <= 5; i += 1)
    ids.push(await store.documents.insert('test', 'tickets', { n: i, status: i % 2 ? 'open' : 'closed', owner: { id: `u${i % 2}` } }))
})
afterAll(() => store.close())

const run = (kind: typeof getNode, spec: Record<string, unknown>, scope: Record<string, unknown> = {}) =>
  kind.execute(nodeContext({ id: 'n', type: kind.type, ...spec }, { scope, store }))

describe('get', () => {
  it('follows found with the document (and _id), or missing with null', async () => {
    expect(await run(getNode, { collection: 'tickets', documentId: '{{start.id}}' }, { start: { id: ids[0] } })).toEqual({
      output: { _id: ids[0], n: 1, owner: { id: 'u1' }, status: 'open' },
      port: 'found',
    })
    const missing: unknown[] = ['nope', null, { $ne: null }, 42, ['x']]
    for (const id of missing)
      expect(await run(getNode, { collection: 'tickets', documentId: '{{start.id}}' }, { start: { id } })).toEqual({ output: null, port: 'missing' })
    expect(await run(getNode, { collection: 'other', documentId: ids[0] })).toEqual({ output: null, port: 'missing' })
  })
})

describe('find', () => {
  const table: [string, Record<string, unknown>, Record<string, unknown>, number[], number][] = [
    ['no filter: everything, insertion order', {}, {}, [1, 2, 3, 4, 5], 5],
    ['a referenced equality', { filter: { status: '{{start.status}}' } }, { status: 'open' }, [1, 3, 5], 3],
    ['sort and page; count is every match', { filter: { status: 'open' }, sort: { n: -1 }, limit: 2, skip: 1 }, {}, [3, 1], 3],
    [
      'limit and skip from references given as text',
      { sort: { n: 1 }, limit: '{{start.limit}}', skip: '{{start.skip}}' },
      { limit: '2', skip: '3' },
      [4, 5],
      5,
    ],
    ['a limit above 1000 is capped', { limit: '{{start.limit}}' }, { limit: 5000 }, [1, 2, 3, 4, 5], 5],
    ['dotted path and $in from a reference', { filter: { 'owner.id': { $in: '{{start.owners}}' } } }, { owners: ['u0'] }, [2, 4], 2],
    ['an operator-looking value is data', { filter: { status: '{{start.status}}' } }, { status: { $ne: null } }, [], 0],
  ]
  it.each(table)('%s', async (_what, settings, start, ns, count) => {
    const result = await run(findNode, { collection: 'tickets', ...settings }, { start })
    const output = result.output as { documents: { n: number }[]; count: number }
    expect(output.documents.map((d) => d.n)).toEqual(ns)
    expect(output.count).toBe(count)
    expect(result.port).toBeUndefined()
  })

  it('fails on a limit that is not a whole number, and on a $in that is not a list', async () => {
    await expect(run(findNode, { collection: 'tickets', limit: '{{start.limit}}' }, { start: { limit: 'ten' } })).rejects.toThrow(
      'limit must be a whole number of 0 or more, got "ten"',
    )
    await expect(run(findNode, { collection: 'tickets', skip: '{{start.skip}}' }, { start: { skip: -1 } })).rejects.toThrow('skip must be a whole number')
    await expect(run(findNode, { collection: 'tickets', filter: { n: { $in: '{{start.x}}' } } }, { start: { x: 3 } })).rejects.toThrow(
      '$in/$nin needs a list, got number 3',
    )
  })
})

describe('update', () => {
  it('sets and unsets by id, counting matched and modified', async () => {
    const spec = { collection: 'tickets', documentId: '{{start.id}}', set: { status: '{{start.status}}', note: 'x' }, unset: ['owner'] }
    expect(await run(updateNode, spec, { start: { id: ids[1], status: 'done' } })).toEqual({ output: { matched: 1, modified: 1 } })
    expect(await run(updateNode, spec, { start: { id: ids[1], status: 'done' } })).toEqual({ output: { matched: 1, modified: 0 } })
    expect(await store.documents.get('test', 'tickets', ids[1]!)).toEqual({ _id: ids[1], n: 2, note: 'x', status: 'done' })
    expect(await run(updateNode, spec, { start: { id: { $ne: null }, status: 'done' } })).toEqual({ output: { matched: 0, modified: 0 } })
  })

  it('takes set from a reference to an object, and refuses _id or dotted keys there', async () => {
    const spec = { collection: 'tickets', filter: { n: 3 }, set: '{{start.patch}}' }
    expect(await run(updateNode, spec, { start: { patch: { color: 'red' } } })).toEqual({ output: { matched: 1, modified: 1 } })
    await expect(run(updateNode, spec, { start: { patch: { _id: 'x' } } })).rejects.toThrow("set: _id is the document's id and cannot be changed")
    await expect(run(updateNode, spec, { start: { patch: { 'a.b': 1 } } })).rejects.toThrow('set: "a.b" must be a top-level field')
    await expect(run(updateNode, spec, { start: { patch: [1] } })).rejects.toThrow('set must give an object of fields, got a list')
  })
})

describe('delete', () => {
  it('deletes by id or filter and reports how many', async () => {
    expect(await run(deleteNode, { collection: 'tickets', documentId: '{{start.id}}' }, { start: { id: ids[4] } })).toEqual({ output: { deleted: 1 } })
    expect(await run(deleteNode, { collection: 'tickets', documentId: '{{start.id}}' }, { start: { id: ids[4] } })).toEqual({ output: { deleted: 0 } })
    expect(await run(deleteNode, { collection: 'tickets', filter: { status: '{{start.s}}' } }, { start: { s: "' OR 1=1 --" } })).toEqual({
      output: { deleted: 0 },
    })
    expect(await run(deleteNode, { collection: 'tickets', filter: { status: 'open' } })).toEqual({ output: { deleted: 2 } })
    expect((await store.documents.find('test', 'tickets', { filter: { kind: 'all', items: [] }, limit: 10 })).count).toBe(2)
  })
})

describe('load checks', () => {
  const table: [typeof getNode, Record<string, unknown>, string[]][] = [
    [findNode, { collection: 'c', filter: { a: { $regex: 'x' } } }, ['filter: "$regex" is not a filter operator']],
    [findNode, { collection: 'c', sort: { 'a.0': 1 } }, ['sort: "a.0": "0" would be an array position']],
    [deleteNode, { collection: 'c' }, ['delete needs a documentId or a filter with at least one condition']],
    [deleteNode, { collection: 'c', filter: {} }, ['delete needs a documentId or a filter with at least one condition']],
    [updateNode, { collection: 'c', set: { a: 1 } }, ['update needs a documentId or a filter with at least one condition']],
    [
      updateNode,
      { collection: 'c', documentId: 'x', set: { _id: 1, 'a.b': 2 }, unset: ['$x'] },
      ["set: _id is the document's id", 'set: "a.b" must be a top-level field', 'unset: "$x" is not a field path'],
    ],
    [updateNode, { collection: 'c', documentId: 'x', set: { a: 1 } }, []],
  ]
  it.each(table)('%s %j', (kind, settings, messages) => {
    const problems = kind.checkSettings?.(settings, NO_CONTEXT) ?? []
    expect(problems).toHaveLength(messages.length)
    messages.forEach((message, i) => expect(problems[i]?.message).toContain(message))
  })
})
