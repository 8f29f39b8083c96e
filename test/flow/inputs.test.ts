import { describe, expect, it } from 'vitest'
import { compiledInputsOf, validateInputs } from '../../src/flow/inputs.js'
import type { StartInputs } from '../../src/model/project.js'
import type { RunInput } from '../../src/model/run.js'
import { buildFlow } from './build.js'

function flowWith(inputs: StartInputs) {
  return buildFlow('Inputs', [{ id: 'start', type: 'start', name: 'Start', inputs }])
}

const order = flowWith({
  path: { type: 'object', properties: { id: { type: 'integer' }, shop: { type: 'string' } } },
  query: {
    type: 'object',
    properties: { dryRun: { type: 'boolean', default: false }, tag: { type: 'array', items: { type: 'string' } }, page: { type: 'integer' } },
  },
  headers: { type: 'object', properties: { 'X-Tenant': { type: 'string' } }, required: ['X-Tenant'] },
  body: {
    type: 'object',
    required: ['sku', 'qty'],
    properties: {
      sku: { type: 'string', minLength: 1, 'x-ui': 'unknown keywords are ignored' },
      qty: { type: 'integer', minimum: 1, maximum: 100 },
      note: { type: 'string', default: 'none' },
      email: { type: 'string', format: 'email' },
    },
  },
})
const valid: RunInput = { body: { sku: 'A', qty: 2 }, path: { id: '7', shop: 'main' }, query: {}, headers: { 'x-tenant': 't1' } }

describe('validateInputs', () => {
  it('coerces parameters, applies defaults and merges body, path, query and headers in that order', () => {
    const result = validateInputs(order, { ...valid, query: { page: '3', dryRun: 'true', ignored: 'x' } })
    expect(result).toEqual({
      ok: true,
      values: { sku: 'A', qty: 2, note: 'none', id: 7, shop: 'main', page: 3, dryRun: true, 'X-Tenant': 't1' },
      input: { body: { sku: 'A', qty: 2, note: 'none' }, path: { id: 7, shop: 'main' }, query: { page: 3, dryRun: true }, headers: { 'X-Tenant': 't1' } },
    })
    if (result.ok) expect(Object.keys(result.values)).toEqual(['sku', 'qty', 'note', 'id', 'shop', 'dryRun', 'page', 'X-Tenant'])
  })

  it.each([
    ['1', true],
    ['0', false],
    ['true', true],
    ['false', false],
  ])('a boolean parameter accepts %s', (text, value) => {
    const result = validateInputs(order, { ...valid, query: { dryRun: text } })
    expect(result.ok && result.values.dryRun).toBe(value)
  })

  it('a boolean parameter still rejects other text', () => {
    expect(validateInputs(order, { ...valid, query: { dryRun: 'maybe' } })).toEqual({ ok: false, errors: ['query/dryRun: must be boolean'] })
  })

  it('keeps repeated query keys as arrays only for array-typed properties', () => {
    const result = validateInputs(order, { ...valid, query: { tag: ['a', 'b'], page: ['4', '5'] } })
    expect(result.ok && result.values).toMatchObject({ tag: ['a', 'b'], page: 4 })
    const single = validateInputs(order, { ...valid, query: { tag: 'a' } })
    expect(single.ok && single.values.tag).toEqual(['a'])
  })

  const invalid: [string, RunInput, string[]][] = [
    ['qty too small', { ...valid, body: { sku: 'A', qty: 0 } }, ['body/qty: must be >= 1']],
    [
      'missing required body fields point at the property',
      { ...valid, body: {} },
      ["body/sku: must have required property 'sku'", "body/qty: must have required property 'qty'"],
    ],
    [
      'missing body validates as {}',
      { ...valid, body: undefined },
      ["body/sku: must have required property 'sku'", "body/qty: must have required property 'qty'"],
    ],
    ['the body is not coerced', { ...valid, body: { sku: 'A', qty: '2' } }, ['body/qty: must be integer']],
    ['a non-object body', { ...valid, body: [1] }, ['body: must be object']],
    ['formats are checked', { ...valid, body: { sku: 'A', qty: 1, email: 'nope' } }, ['body/email: must match format "email"']],
    ['path values are coerced, not guessed', { ...valid, path: { id: 'abc', shop: 'main' } }, ['path/id: must be integer']],
    ['every path parameter is required', { ...valid, path: { id: '1' } }, ["path/shop: must have required property 'shop'"]],
    ['query types', { ...valid, query: { dryRun: 'maybe' } }, ['query/dryRun: must be boolean']],
    ['header names compare lower-case; output uses the declared name', { ...valid, headers: {} }, ["headers/X-Tenant: must have required property 'X-Tenant'"]],
    [
      'all problems at once',
      { body: { sku: '', qty: 101 }, path: { id: 'x', shop: 's' }, headers: { 'x-tenant': 't' } },
      ['body/sku: must NOT have fewer than 1 characters', 'body/qty: must be <= 100', 'path/id: must be integer'],
    ],
  ]
  it.each(invalid)('%s', (_, input, errors) => {
    expect(validateInputs(order, input)).toEqual({ ok: false, errors })
  })

  it('points additionalProperties errors at the extra property', () => {
    const strict = flowWith({ body: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } } })
    expect(validateInputs(strict, { body: { a: 'x', 'b/c': 1 } })).toEqual({ ok: false, errors: ['body/b~1c: must NOT have additional properties'] })
  })

  it('ignores a body when no body schema exists, and needs no inputs at all', () => {
    const none = flowWith({})
    expect(validateInputs(none, { body: { a: 1 }, query: { b: 'c' } })).toEqual({ ok: true, values: {}, input: { path: {}, query: {}, headers: {} } })
  })

  it("does not write defaults into the caller's body (schedule inputs are shared)", () => {
    const body = { sku: 'A', qty: 1 }
    const result = validateInputs(order, { ...valid, body })
    expect(result.ok && result.values.note).toBe('none')
    expect(body).toEqual({ sku: 'A', qty: 1 })
  })

  it('compiles once per flow version', () => {
    expect(compiledInputsOf(order)).toBe(compiledInputsOf(order))
    const reloaded = flowWith(order.start!.inputs)
    expect(compiledInputsOf(reloaded)).not.toBe(compiledInputsOf(order))
    // two flow versions with one `$id` compile side by side
    const withId = { $id: 'https://example.com/body', type: 'object' }
    expect(validateInputs(flowWith({ body: withId }), { body: {} }).ok).toBe(true)
    expect(validateInputs(flowWith({ body: withId }), { body: {} }).ok).toBe(true)
  })
})
