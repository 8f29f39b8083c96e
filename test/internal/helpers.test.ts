// The helpers of src/internal: each one is the only definition of what it does, so each is pinned here.
import { basename, dirname } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LineCounter, parseDocument } from 'yaml'
import { canonicalJson, compareJsonbKeys } from '../../src/internal/canonical-json.js'
import { compareText } from '../../src/internal/compare.js'
import { temporaryPathBeside } from '../../src/internal/ids.js'
import { isRecord } from '../../src/internal/is-record.js'
import { nodeStart, positionFromCounter, positionInText, yamlErrorAt } from '../../src/internal/yaml-position.js'

describe('isRecord', () => {
  it.each([
    [{}, true],
    [{ a: 1 }, true],
    [Object.create(null), true],
    [null, false],
    [undefined, false],
    [[], false],
    [[1], false],
    ['text', false],
    [1, false],
    [true, false],
  ])('%j → %s', (value, expected) => {
    expect(isRecord(value)).toBe(expected)
  })
})

describe('compareText', () => {
  it('orders by UTF-16 code units, like sort() without a comparator, whatever the locale', () => {
    const words = ['b', 'B', 'a', 'ä', 'Z', '10', '9', 'a-b', 'a_b', '', 'é', 'e\u0301', '😀', '\uffff']
    expect([...words].sort(compareText)).toEqual([...words].sort())
    expect(compareText('a', 'a')).toBe(0)
    expect(compareText('B', 'a')).toBe(-1) // upper case first: code units, not a collation
    expect(compareText('a', 'B')).toBe(1)
  })
})

describe('canonicalJson', () => {
  it('orders keys like jsonb (shorter first, then bytes), deeply, and drops undefined', () => {
    expect(JSON.stringify(canonicalJson({ bb: 1, a: { z: 1, y: [{ d: 1, c: 2 }] }, c: undefined, é: 1 }))).toBe(
      '{"a":{"y":[{"c":2,"d":1}],"z":1},"bb":1,"é":1}',
    )
  })

  it('gives equal text for equal values written in any key order, and leaves scalars as they are', () => {
    const one = { b: [1, { y: null, x: 'é' }], a: true }
    const two = { a: true, b: [1, { x: 'é', y: null }] }
    expect(JSON.stringify(canonicalJson(one))).toBe(JSON.stringify(canonicalJson(two)))
    for (const scalar of [null, 0, 'x', false]) expect(canonicalJson(scalar)).toBe(scalar)
  })

  it('compares non-ASCII keys by UTF-8 byte length first, as jsonb does', () => {
    // 'é' is one code unit but two UTF-8 bytes: after every one-byte key, before three-byte ones.
    expect(['é', 'zz', 'a', 'abc'].sort(compareJsonbKeys)).toEqual(['a', 'zz', 'é', 'abc'])
  })
})

describe('YAML positions', () => {
  const text = 'a: 1\nlist:\n  - x\n  - "y"\n\nlast: {k: v}\n'

  it('positionInText gives what yaml’s LineCounter gives, at every offset', () => {
    const lineCounter = new LineCounter()
    parseDocument(text, { lineCounter })
    for (let offset = 0; offset <= text.length; offset++) {
      expect(positionInText(text, offset), `offset ${offset}`).toEqual(positionFromCounter(lineCounter, offset))
    }
    expect(positionInText(text, text.indexOf('"y"'))).toEqual({ line: 4, column: 5 })
  })

  it('nodeStart is where a node begins; nothing for a missing node', () => {
    const doc = parseDocument(text)
    expect(nodeStart(doc.getIn(['last', 'k'], true))).toBe(text.indexOf('v}'))
    expect(nodeStart(doc.getIn(['nope'], true))).toBeUndefined()
    expect(nodeStart(null)).toBeUndefined()
  })

  it('yamlErrorAt gives the error’s position and its message without yaml’s position and code excerpt', () => {
    const doc = parseDocument('a: 1\na: 2\n', { uniqueKeys: true })
    const error = doc.errors[0]!
    expect(error.message).toContain('at line 2, column 1')
    expect(yamlErrorAt(error)).toEqual({ line: 2, column: 1, message: 'Map keys must be unique' })
  })
})

describe('temporaryPathBeside', () => {
  it('is a hidden, unique name in the same folder', () => {
    const path = '/some/folder/flow.yaml'
    const names = new Set(Array.from({ length: 100 }, () => temporaryPathBeside(path)))
    expect(names.size).toBe(100)
    for (const name of names) {
      expect(dirname(name)).toBe('/some/folder')
      expect(basename(name)).toMatch(new RegExp(`^\\.flow\\.yaml\\.${process.pid}\\.[0-9a-f]{12}\\.tmp$`))
    }
  })
})
