import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { endNode } from '../../src/nodes/end.js'
import { ifNode } from '../../src/nodes/if.js'
import { insertNode } from '../../src/nodes/insert.js'
import { setNode } from '../../src/nodes/set.js'
import { startNode } from '../../src/nodes/start/kind.js'
import { switchNode } from '../../src/nodes/switch.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'
import { nodeContext } from './context.js'

const scope = { start: { qty: 12, sku: 'A-1', state: 'shipped', code: '2' }, price: { total: 9.5 } }

describe('start', () => {
  it('outputs the validated inputs the engine hands it', async () => {
    const inputs = { sku: 'A-1', qty: 2 }
    expect(await startNode.execute(nodeContext({ id: 's', type: 'start' }, { inputs }))).toEqual({ output: inputs })
    expect(await startNode.execute(nodeContext({ id: 's', type: 'start' }))).toEqual({ output: {} })
  })
})

describe('set', () => {
  it('outputs its values with references resolved and types kept', async () => {
    const context = nodeContext(
      { id: 'p', type: 'set', values: { qty: '{{start.qty}}', label: '{{start.sku}} x{{start.qty}}', fixed: [1, { a: true }], token: '${secrets.KEY}' } },
      { scope, secrets: { KEY: 'k-123456' } },
    )
    expect(await setNode.execute(context)).toEqual({ output: { qty: 12, label: 'A-1 x12', fixed: [1, { a: true }], token: 'k-123456' } })
  })

  it('fails on an unset secret, naming it', async () => {
    await expect(setNode.execute(nodeContext({ id: 'p', type: 'set', values: { t: '${secrets.GONE}' } }))).rejects.toThrow(/secret GONE is not set/)
  })
})

describe('if', () => {
  const cases: [unknown, boolean][] = [
    [{ left: '{{start.qty}}', op: 'gt', right: 10 }, true],
    [{ left: '{{start.qty}}', op: 'lte', right: 10 }, false],
    [
      {
        any: [
          { left: '{{start.sku}}', op: 'startsWith', right: 'B' },
          { left: '{{price.total}}', op: 'lt', right: 10 },
        ],
      },
      true,
    ],
  ]
  it.each(cases)('%j → port %s', async (condition, result) => {
    const outcome = await ifNode.execute(nodeContext({ id: 'c', type: 'if', condition }, { scope }))
    expect(outcome).toEqual({ output: { result }, port: String(result) })
  })
})

describe('switch', () => {
  const cases = [
    { value: 'open', port: 'open' },
    { value: 'shipped', port: 'sent' },
    { value: 2, port: 'two' },
  ]
  const table: [string, string | undefined, string][] = [
    ['{{start.state}}', undefined, 'sent'],
    ['open', undefined, 'open'],
    ['{{start.code}}', undefined, 'two'], // numeric string equals the number case
    ['lost', undefined, 'default'],
    ['lost', 'unknown', 'unknown'],
  ]
  it.each(table)('%s (default %s) → %s', async (value, fallback, port) => {
    const spec = { id: 'r', type: 'switch', value, cases, ...(fallback ? { default: fallback } : {}) }
    const outcome = await switchNode.execute(nodeContext(spec, { scope }))
    expect(outcome.port).toBe(port)
    expect(outcome.output).toEqual({ value: value === '{{start.state}}' ? 'shipped' : value === '{{start.code}}' ? '2' : value, port })
  })

  it('lists its ports from its cases and default', () => {
    const portsOf = (settings: Record<string, unknown>) => switchNode.ports(switchNode.parseSettings(settings))
    expect(portsOf({ cases, default: 'other' })).toEqual(['open', 'sent', 'two', 'other'])
    expect(
      portsOf({
        cases: [
          { value: 1, port: 'a' },
          { value: 2, port: 'a' },
        ],
      }),
    ).toEqual(['a', 'default'])
  })
})

describe('end', () => {
  it('answers with its status, resolved body and headers', async () => {
    const spec = { id: 'd', type: 'end', status: 201, body: { id: '{{start.sku}}', qty: '{{start.qty}}', ok: true }, headers: { 'x-qty': '{{start.qty}}' } }
    const response = { status: 201, body: { id: 'A-1', qty: 12, ok: true }, headers: { 'x-qty': '12' } }
    expect(await endNode.execute(nodeContext(spec, { scope }))).toEqual({ output: response, response })
  })

  it('defaults to 200, a null body and no headers; a whole reference body keeps its type', async () => {
    expect((await endNode.execute(nodeContext({ id: 'd', type: 'end' }))).response).toEqual({ status: 200, body: null, headers: {} })
    expect((await endNode.execute(nodeContext({ id: 'd', type: 'end', body: '{{price}}' }, { scope }))).response?.body).toEqual({ total: 9.5 })
  })
})

describe('insert', () => {
  let store: Store
  beforeAll(async () => {
    store = await openSqliteStore(':memory:')
  })
  afterAll(async () => {
    await store.close()
  })

  it('writes the resolved document and outputs its string id', async () => {
    const spec = { id: 'i', type: 'insert', collection: 'orders', document: { sku: '{{start.sku}}', qty: '{{start.qty}}', tags: ['{{start.state}}'] } }
    const outcome = await insertNode.execute(nodeContext(spec, { scope, store }))
    const output = outcome.output as { insertedId: string; acknowledged: boolean }
    expect(output.acknowledged).toBe(true)
    expect(typeof output.insertedId).toBe('string')
    expect(await store.documents.get('test', 'orders', output.insertedId)).toEqual({ _id: output.insertedId, sku: 'A-1', qty: 12, tags: ['shipped'] })
  })

  it('takes a whole reference to an object as the document', async () => {
    const outcome = await insertNode.execute(nodeContext({ id: 'i', type: 'insert', collection: 'log', document: '{{start}}' }, { scope, store }))
    const { insertedId } = outcome.output as { insertedId: string }
    expect(await store.documents.get('test', 'log', insertedId)).toEqual({ _id: insertedId, ...scope.start })
  })
})
