// The shortcuts that let a load skip Intl start-up and ajv give the same answers as the slow path
// they stand in for; and flowctl's cron checks agree with croner, which runs what they accept.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { Cron } from 'croner'
import { INPUT_AJV_OPTIONS } from '../../src/project/builtin-schemas.js'
import type { JsonSchema } from '../../src/model/project.js'
import { plainlySatisfies } from '../../src/project/plain-schema.js'
import { checkCronExpression, isValidTimezone } from '../../src/language/cron.js'
import { readCron } from '../../src/language/cron-dialect.js'

const require = createRequire(import.meta.url)
const { Ajv } = require('ajv') as typeof import('ajv')
const addFormats = require('ajv-formats') as typeof import('ajv-formats')

const PARTS = (min: number, max: number): string[] => {
  const values = [min - 1, min, min + 1, Math.floor((min + max) / 2), max - 1, max, max + 1, 99]
  const parts = ['*', '*/0', '*/1', `*/${max - min}`, `*/${max - min + 1}`, '*/99', '5/15', '1-2/0', 'L', 'MON', 'FRI-SUN', '5#2', '5L', '?', '1,,2', '-1']
  for (const a of values) {
    parts.push(String(a), `0${a}`.slice(-2))
    for (const b of values) parts.push(`${a}-${b}`, `${a}-${b}/2`, `${a}-${b}/${max}`, `${a},${b}`)
  }
  return parts
}
const RANGES: [number, number][] = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
]

// flowctl checks the dialect itself (cron-dialect.ts) and hands croner a rewritten pattern: every
// expression it accepts must be one croner accepts too, or a schedule would fail at run time.
describe('checkCronExpression and croner', () => {
  it('croner accepts every rewritten pattern flowctl accepts, over every field value, range, step and list tried', () => {
    let compared = 0
    let accepted = 0
    RANGES.forEach(([min, max], index) => {
      for (const part of PARTS(min, max)) {
        const fields = ['0', '0', '*', '*', '*']
        fields[index] = part
        const expr = fields.join(' ')
        const read = readCron(expr)
        compared++
        if (!read.ok) continue
        accepted++
        expect(() => new Cron(read.plan.pattern, { mode: '5-part', timezone: 'UTC', paused: true }), `${expr} -> ${read.plan.pattern}`).not.toThrow()
      }
    })
    expect(compared).toBeGreaterThan(1000)
    expect(accepted).toBeGreaterThan(300)
  })

  it('accepts days of month that some months lack, as cronie does (they never run in those months)', () => {
    for (const dom of ['1', '29', '30', '31', '30-31', '*/2']) {
      for (const month of ['*', '2', '4', '2,4', '1-12', '2-4/2']) {
        expect(checkCronExpression(`0 0 ${dom} ${month} *`)).toBeNull()
      }
    }
  })
})

describe('isValidTimezone without Intl.DateTimeFormat', () => {
  it('agrees with Intl.DateTimeFormat', () => {
    const intl = (tz: string) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: tz })
        return true
      } catch {
        return false
      }
    }
    for (const tz of ['UTC', 'Europe/Berlin', 'europe/berlin', 'Etc/GMT+5', 'US/Eastern', 'Asia/Calcutta', 'GMT', 'Mars/Base', 'Berlin', '+01:00']) {
      expect(isValidTimezone(tz), tz).toBe(intl(tz))
    }
  })
})

describe('plainlySatisfies (schedule input against the Start body schema)', () => {
  const ajv = new Ajv(INPUT_AJV_OPTIONS)
  addFormats.default(ajv)
  const object = (properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({ type: 'object', properties, ...extra })
  const schemas: JsonSchema[] = [
    object({ reason: { type: 'string', default: 'manual' } }),
    object({ n: { type: 'integer', minimum: 1, maximum: 10 }, tag: { enum: ['a', 'b', null] } }, { required: ['n'] }),
    object({ list: { type: 'array', items: { type: 'string', minLength: 2 }, minItems: 1 } }, { additionalProperties: false }),
    object({ when: { type: 'string', format: 'date-time' } }),
    object({ deep: object({ x: { type: ['number', 'null'], exclusiveMinimum: 0 } }, { required: ['x'] }) }),
    object({ a: { type: 'string', default: 5 } }, { required: ['a'] }),
    object({}, { additionalProperties: { type: 'boolean' } }),
    object({ c: { const: 'x' }, any: {} }),
  ]
  const values: unknown[] = [
    {},
    { reason: 'nightly' },
    { reason: 3 },
    { n: 3 },
    { n: 0 },
    { n: 2.5, tag: 'c' },
    { n: 5, tag: null },
    { list: ['ab', 'cd'] },
    { list: [] },
    { list: ['a'] },
    { list: ['ab'], more: 1 },
    { when: '2026-01-01T00:00:00Z' },
    { when: 'soon' },
    { deep: { x: 1 } },
    { deep: { x: 0 } },
    { deep: { x: null } },
    { deep: {} },
    { flag: true, other: 'no' },
    { c: 'x', any: [1, { a: 2 }] },
    { c: 'y' },
    { reason: '😀' },
    { list: ['😀'] },
  ]

  it('is true only when ajv accepts, with the same defaults applied', () => {
    let sure = 0
    for (const schema of schemas) {
      const validate = ajv.compile(schema)
      for (const value of values) {
        const quick = structuredClone(value)
        const full = structuredClone(value)
        const ajvValid = validate(full)
        if (plainlySatisfies(schema, quick)) {
          sure++
          expect({ schema, value, ajvValid }).toEqual({ schema, value, ajvValid: true })
          expect(quick).toEqual(full)
        }
      }
    }
    expect(sure).toBeGreaterThan(20)
  })

  it("is sure about the example project's nightly input", () => {
    expect(plainlySatisfies(schemas[0] as JsonSchema, { reason: 'nightly' })).toBe(true)
    expect(plainlySatisfies(schemas[0] as JsonSchema, { reason: 3 })).toBe(false)
  })
})
