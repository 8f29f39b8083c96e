import { describe, expect, it } from 'vitest'
import { evaluateCondition, valuesEqual } from '../../src/language/condition.js'
import { resolveValue } from '../../src/language/resolve.js'

const scope = {
  run: { id: 'r1', startedAt: '2024-01-01T00:00:00.000Z', trigger: 'cli' },
  start: { qty: 12, sku: 'ABC-1', tags: ['red', 'big'], name: '', note: null, obj: {}, list: [], nested: { a: 1 } },
}
const resolve = (value: unknown) => resolveValue(value, scope, new Map())
const check = (left: unknown, op: string, right?: unknown) => evaluateCondition({ left, op, right }, resolve)

describe('evaluateCondition: operators', () => {
  const cases: [unknown, string, unknown, boolean][] = [
    [1, 'eq', 1, true],
    [1, 'eq', 2, false],
    ['5', 'eq', 5, true],
    [5, 'eq', '5.0', true],
    ['abc', 'eq', 'abc', true],
    ['{{start.qty}}', 'eq', 12, true],
    ['{{start.qty}}', 'eq', '12', true],
    ['{{start.missing}}', 'eq', null, true],
    [{ a: [1, 2] }, 'eq', { a: [1, 2] }, true],
    [{ a: [1, 2] }, 'eq', { a: [2, 1] }, false],
    [true, 'eq', 'true', false],
    [1, 'ne', 2, true],
    ['x', 'ne', 'x', false],
    ['{{start.qty}}', 'gt', 10, true],
    ['{{start.qty}}', 'gt', 12, false],
    ['{{start.qty}}', 'gte', 12, true],
    ['{{start.qty}}', 'lt', 13, true],
    ['{{start.qty}}', 'lte', 11, false],
    ['12', 'gt', 9, true], // numeric string vs number: numeric, not text order
    ['12', 'gt', '9', false], // two strings: text order
    ['b', 'gt', 'a', true],
    ['2024-02-01', 'gte', '2024-01-31', true],
    ['abc', 'gt', 1, false], // not a number
    [null, 'lt', 1, false],
    ['{{start.tags}}', 'contains', 'red', true],
    ['{{start.tags}}', 'contains', 'blue', false],
    ['{{start.sku}}', 'contains', 'C-1', true],
    ['{{start.sku}}', 'contains', 'z', false],
    [12, 'contains', 1, false],
    ['red', 'in', '{{start.tags}}', true],
    ['blue', 'in', '{{start.tags}}', false],
    ['BC', 'in', '{{start.sku}}', true],
    [2, 'in', ['1', '2'], true],
    ['{{start.sku}}', 'startsWith', 'AB', true],
    ['{{start.sku}}', 'startsWith', 'BC', false],
    ['{{start.sku}}', 'endsWith', '-1', true],
    ['{{start.sku}}', 'endsWith', 'A', false],
    [12345, 'startsWith', '12', true],
    ['{{start.qty}}', 'exists', undefined, true],
    ['{{start.missing}}', 'exists', undefined, false],
    ['{{start.note}}', 'exists', undefined, false],
    [0, 'exists', undefined, true],
    ['{{start.name}}', 'empty', undefined, true],
    ['{{start.note}}', 'empty', undefined, true],
    ['{{start.obj}}', 'empty', undefined, true],
    ['{{start.list}}', 'empty', undefined, true],
    ['{{start.missing}}', 'empty', undefined, true],
    ['{{start.tags}}', 'empty', undefined, false],
    ['{{start.nested}}', 'empty', undefined, false],
    [0, 'empty', undefined, false],
  ]
  it.each(cases)('%j %s %j → %s', (left, op, right, expected) => {
    expect(check(left, op, right)).toBe(expected)
  })
})

describe('evaluateCondition: all / any / not', () => {
  const yes = { left: 1, op: 'eq', right: 1 }
  const no = { left: 1, op: 'eq', right: 2 }
  const cases: [unknown, boolean][] = [
    [{ all: [yes, yes] }, true],
    [{ all: [yes, no] }, false],
    [{ all: [] }, true],
    [{ any: [no, yes] }, true],
    [{ any: [no, no] }, false],
    [{ any: [] }, false],
    [{ not: yes }, false],
    [{ not: no }, true],
    [{ all: [{ any: [no, { not: no }] }, { left: '{{start.qty}}', op: 'gt', right: 10 }] }, true],
  ]
  it.each(cases)('%j → %s', (condition, expected) => {
    expect(evaluateCondition(condition, resolve)).toBe(expected)
  })

  it('rejects unknown operators and shapes with a clear message', () => {
    expect(() => check(1, 'matches', 1)).toThrow(/unknown condition operator "matches"/)
    expect(() => evaluateCondition('1 == 1', resolve)).toThrow(/must be an object/)
    expect(() => evaluateCondition({ all: 'x' }, resolve)).toThrow(/list of conditions/)
  })
})

describe('valuesEqual', () => {
  const cases: [unknown, unknown, boolean][] = [
    [1, '1', true],
    ['1.5', 1.5, true],
    [' ', 0, false],
    ['', 0, false],
    [null, undefined, true],
    [null, 0, false],
    [[1, { a: 'x' }], [1, { a: 'x' }], true],
    [[1], [1, 2], false],
    [{ a: 1 }, { b: 1 }, false],
    [{ a: 1, b: 2 }, { b: 2, a: 1 }, true],
    [[], {}, false],
  ]
  it.each(cases)('%j = %j → %s', (a, b, expected) => {
    expect(valuesEqual(a, b)).toBe(expected)
    expect(valuesEqual(b, a)).toBe(expected)
  })
})
