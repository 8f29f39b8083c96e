import { describe, expect, it } from 'vitest'
import { createResolver, createScope, MissingSecretError, resolveValue, templateCacheOf } from '../../src/language/resolve.js'
import { buildFlow } from './build.js'

const scope = Object.assign(createScope({ id: 'run-1', startedAt: '2024-05-01T10:00:00.000Z', trigger: 'http' }), {
  start: { qty: 3, sku: 'A-1', flag: false, price: 9.5, nothing: null, tags: ['x', 'y'], meta: { a: 1 }, 'x-tenant': 't1' },
  price: { items: [{ sku: 'first', n: 1 }, { sku: 'second' }] },
})
const secrets = new Map([['TOKEN', 'tok-secret-value']])
const resolve = (value: unknown) => resolveValue(value, scope, secrets)

describe('templates', () => {
  const cases: [string, unknown, unknown][] = [
    ['whole reference keeps a number', '{{start.qty}}', 3],
    ['whole reference with spaces', '{{  start.qty  }}', 3],
    ['whole reference keeps a boolean', '{{start.flag}}', false],
    ['whole reference keeps an object', '{{start.meta}}', { a: 1 }],
    ['whole reference keeps an array', '{{start.tags}}', ['x', 'y']],
    ['whole reference to a node output', '{{price}}', { items: [{ sku: 'first', n: 1 }, { sku: 'second' }] }],
    ['hyphenated names', '{{start.x-tenant}}', 't1'],
    ['array index', '{{price.items.0.sku}}', 'first'],
    ['second array item', '{{price.items.1.sku}}', 'second'],
    ['index out of range → null', '{{price.items.5.sku}}', null],
    ['non-numeric index on array → null', '{{price.items.first}}', null],
    ['missing field → null', '{{start.missing}}', null],
    ['missing deep field → null', '{{start.missing.deeper}}', null],
    ['field of a number → null', '{{start.qty.x}}', null],
    ['null stays null', '{{start.nothing}}', null],
    ['unexecuted node → null', '{{later.x}}', null],
    ['prototype is not reachable', '{{start.constructor}}', null],
    ['run values', '{{run.id}}', 'run-1'],
    ['run.trigger in text', 'via {{run.trigger}}', 'via http'],
    ['number in text', 'qty={{start.qty}}', 'qty=3'],
    ['boolean in text', 'flag {{start.flag}}', 'flag false'],
    ['object in text as JSON', 'meta: {{start.meta}}', 'meta: {"a":1}'],
    ['array in text as JSON', '{{start.tags}}!', '["x","y"]!'],
    ['missing in text → empty', '[{{start.missing}}]', '[]'],
    ['null in text → empty', '[{{start.nothing}}]', '[]'],
    ['two references', '{{start.sku}}/{{start.qty}}', 'A-1/3'],
    ['secret alone', '${secrets.TOKEN}', 'tok-secret-value'],
    ['secret in text', 'Bearer ${secrets.TOKEN}', 'Bearer tok-secret-value'],
    ['plain text', 'no templates here', 'no templates here'],
    ['lone braces are text', 'a { b } c', 'a { b } c'],
  ]
  it.each(cases)('%s: %s', (_, template, expected) => {
    expect(resolve(template)).toEqual(expected)
  })

  it('resolves objects and arrays deeply, leaving other values alone', () => {
    const value = { id: '{{start.sku}}', n: '{{start.qty}}', list: ['{{start.flag}}', 2, null], ok: true, deep: { t: 'q{{start.qty}}' } }
    expect(resolve(value)).toEqual({ id: 'A-1', n: 3, list: [false, 2, null], ok: true, deep: { t: 'q3' } })
    expect(value.id).toBe('{{start.sku}}') // the setting itself is untouched
  })

  it('fails with the secret name, never a value, when a secret is not set', () => {
    expect(() => resolve('x ${secrets.NOPE}')).toThrow(MissingSecretError)
    expect(() => resolve('${secrets.NOPE}')).toThrow(/secret NOPE is not set/)
  })

  it('rejects malformed references', () => {
    expect(() => resolve('{{ start qty }}')).toThrow(/not a valid reference/)
  })

  it('parses each distinct string once per flow version', () => {
    const flow = buildFlow('Cache', [])
    const resolveIn = createResolver(flow, scope, secrets)
    expect(resolveIn({ a: '{{start.qty}}', b: 'x {{start.sku}}', c: 'plain' })).toEqual({ a: 3, b: 'x A-1', c: 'plain' })
    const cache = templateCacheOf(flow)
    expect([...cache.keys()].sort()).toEqual(['x {{start.sku}}', '{{start.qty}}'])
    const parsed = cache.get('{{start.qty}}')
    createResolver(flow, scope, secrets)('{{start.qty}}')
    expect(cache.get('{{start.qty}}')).toBe(parsed)
    expect(templateCacheOf(buildFlow('Cache', []))).not.toBe(cache)
  })
})
