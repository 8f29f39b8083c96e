// SPEC §17–18: a huge invalid body is rejected cheaply and its 400 still lists up to 20 errors.
// A small body gets every error, counted; a large one the errors of its first VIEW_VALUES values,
// never one that cutting the view made up, then `… and more` / `… and possibly more`.
import { describe, expect, it } from 'vitest'
import { validateInputs } from '../../src/flow/inputs.js'
import { VIEW_VALUES } from '../../src/flow/input-errors.js'
import { capErrorList, MORE_ERRORS, POSSIBLY_MORE_ERRORS } from '../../src/flow/reason.js'
import type { JsonSchema } from '../../src/model/project.js'
import { buildFlow } from './build.js'

function errorsOf(body: JsonSchema, value: unknown): string[] {
  const flow = buildFlow('Errors', [{ id: 'start', type: 'start', name: 'Start', inputs: { body } }])
  const result = validateInputs(flow, { body: value })
  if (result.ok) throw new Error('expected the body to be invalid')
  return result.errors
}

const intItems: JsonSchema = { type: 'object', properties: { items: { type: 'array', items: { type: 'integer' } } } }

describe('errors of an invalid body', () => {
  it('lists every error of a small body, counted exactly', () => {
    const errors = errorsOf(intItems, { items: Array.from({ length: 30 }, () => 'x') })
    expect(errors).toHaveLength(30)
    expect(capErrorList(errors)).toEqual([...Array.from({ length: 20 }, (_, i) => `body/items/${i}: must be integer`), '… and 10 more'])
  })

  it('lists 20 errors of a huge array of bad items, then "… and more"', () => {
    const errors = errorsOf(intItems, { items: Array.from({ length: 100_000 }, () => 'x') })
    expect(errors).toEqual([...Array.from({ length: 20 }, (_, i) => `body/items/${i}: must be integer`), MORE_ERRORS])
    expect(capErrorList(errors)).toEqual(errors)
  })

  it('lists 20 unexpected keys of an object with 50,000 of them', () => {
    const body = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 1]))
    const errors = errorsOf({ type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } }, body)
    expect(errors.slice(0, 3)).toEqual([
      'body/k0: must NOT have additional properties',
      'body/k1: must NOT have additional properties',
      'body/k2: must NOT have additional properties',
    ])
    expect(errors).toHaveLength(21)
    expect(errors.at(-1)).toBe(MORE_ERRORS)
  })

  it('a single error past the checked part is listed, and the rest is only "possibly" more', () => {
    const items: unknown[] = Array.from({ length: 3 * VIEW_VALUES }, (_, i) => i)
    items.push('late')
    expect(errorsOf(intItems, { items })).toEqual([`body/items/${3 * VIEW_VALUES}: must be integer`, POSSIBLY_MORE_ERRORS])
  })

  it('never reports what cutting the body made up (a required key past the checked part)', () => {
    const body: Record<string, unknown> = Object.fromEntries(Array.from({ length: 2 * VIEW_VALUES }, (_, i) => [`k${i}`, i]))
    body.k0 = 'not a number'
    body.zzz = 1 // required, and present: only after the first VIEW_VALUES values
    const errors = errorsOf({ type: 'object', required: ['zzz'], minProperties: 2 * VIEW_VALUES, properties: { k0: { type: 'integer' } } }, body)
    expect(errors).toEqual(['body/k0: must be integer', POSSIBLY_MORE_ERRORS])
  })

  it('with anyOf/oneOf/if in the schema, a large body lists the first errors only', () => {
    const schema = { type: 'object', properties: { items: { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'boolean' }] } } } }
    const errors = errorsOf(schema, { items: Array.from({ length: 100_000 }, () => 'x') })
    expect(errors[0]).toBe('body/items/0: must be integer')
    expect(errors).toContain('body/items/0: must match a schema in anyOf')
    expect(errors.at(-1)).toBe(POSSIBLY_MORE_ERRORS)
    expect(errors.length).toBeLessThanOrEqual(21)
  })

  it('puts the uncounted line after the errors of path, query and headers', () => {
    const flow = buildFlow('Errors', [
      { id: 'start', type: 'start', name: 'Start', inputs: { body: intItems, query: { type: 'object', properties: { page: { type: 'integer' } } } } },
    ])
    const result = validateInputs(flow, { body: { items: Array.from({ length: 100_000 }, () => 'x') }, query: { page: 'one' } })
    expect(result.ok).toBe(false)
    const errors = (result as { errors: string[] }).errors
    expect(errors.at(-2)).toBe('query/page: must be integer')
    expect(errors.at(-1)).toBe(MORE_ERRORS)
    expect(capErrorList(errors)).toHaveLength(21)
    expect(capErrorList(errors).at(-1)).toBe(MORE_ERRORS)
  })

  it('a valid large body still passes, defaults applied', () => {
    const flow = buildFlow('Errors', [
      {
        id: 'start',
        type: 'start',
        name: 'Start',
        inputs: { body: { type: 'object', properties: { items: { type: 'array', items: { type: 'integer' } }, note: { type: 'string', default: 'n' } } } },
      },
    ])
    const result = validateInputs(flow, { body: { items: Array.from({ length: 100_000 }, (_, i) => i) } })
    expect(result.ok && result.values.note).toBe('n')
  })
})

describe('capErrorList with an uncounted last line', () => {
  it.each([
    [
      ['a', POSSIBLY_MORE_ERRORS],
      ['a', POSSIBLY_MORE_ERRORS],
    ],
    [
      [...Array.from({ length: 25 }, (_, i) => `e${i}`), POSSIBLY_MORE_ERRORS],
      [...Array.from({ length: 20 }, (_, i) => `e${i}`), MORE_ERRORS],
    ],
    [
      [...Array.from({ length: 20 }, (_, i) => `e${i}`), MORE_ERRORS],
      [...Array.from({ length: 20 }, (_, i) => `e${i}`), MORE_ERRORS],
    ],
  ])('%j → %j', (errors, listed) => {
    expect(capErrorList(errors)).toEqual(listed)
  })
})
