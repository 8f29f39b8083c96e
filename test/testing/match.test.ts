// Partial deep matching and the diff `flowctl test` prints (src/testing/match.ts).
import { describe, expect, it } from 'vitest'
import { diffLines, partialMatch, shapeLike } from '../../src/testing/match.js'

describe('partialMatch', () => {
  it.each([
    ['equal numbers', 1, 1, []],
    ['extra fields are fine', { a: 1 }, { a: 1, b: 2 }, []],
    ['nested partial objects', { a: { b: 1 } }, { a: { b: 1, c: 3 }, d: 4 }, []],
    ['lists item by item, each partial', [{ a: 1 }, { a: 2 }], [{ a: 1, x: 0 }, { a: 2 }], []],
    ['null matches null', { a: null }, { a: null }, []],
    ['a different value', { a: 1 }, { a: 2 }, ['body.a: expected 1, got 2']],
    ['a missing field', { a: 1 }, {}, ['body.a: missing (expected 1)']],
    ['text is not a number', { a: '1' }, { a: 1 }, ['body.a: expected "1", got 1']],
    ['a shorter list', [1, 2], [1], ['body.1: missing (expected 2)']],
    ['a longer list', [1], [1, 2], ['body: expected 1 items, got 2']],
    ['an object where a list is', { a: [1] }, { a: { 0: 1 } }, ['body.a: expected a list, got a mapping']],
    ['nothing where a mapping is expected', { a: 1 }, undefined, ['body: expected a mapping, got nothing']],
  ])('%s', (_name, expected, actual, messages) => {
    expect(partialMatch(expected, actual, 'body').map((m) => `${m.path}: ${m.message}`)).toEqual(messages)
  })
})

describe('shapeLike', () => {
  it('keeps only the fields the expectation names, and extra list items', () => {
    expect(shapeLike({ a: { b: 1 } }, { a: { b: 2, c: 3 }, d: 4 })).toEqual({ a: { b: 2 } })
    expect(shapeLike([{ a: 1 }], [{ a: 1, b: 2 }, { a: 5 }])).toEqual([{ a: 1 }, { a: 5 }])
  })
})

describe('diffLines', () => {
  it('marks expected lines with - and received lines with +, in YAML, keeping equal lines as context', () => {
    expect(diffLines({ total: 21, currency: 'EUR' }, { total: 20, currency: 'EUR', id: 'x' })).toEqual(['- total: 21', '+ total: 20', '  currency: EUR'])
  })

  it('is empty when the values print the same', () => {
    expect(diffLines({ a: 1 }, { a: 1, b: 2 })).toEqual([])
  })
})
