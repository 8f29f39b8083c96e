import { describe, expect, it } from 'vitest'
import { closestName } from '../../src/project/suggest.js'

const KINDS = ['start', 'end', 'if', 'switch', 'insert', 'set', 'http']
const TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']

describe('closestName', () => {
  it.each([
    ['iff', KINDS, 'if'],
    ['ned', KINDS, 'end'],
    ['swich', KINDS, 'switch'],
    ['Start', KINDS, 'start'],
    ['htpp', KINDS, 'http'],
    ['strin', TYPES, 'string'],
    ['bool', TYPES, 'boolean'],
    ['stauts', ['status', 'body', 'headers', 'schema'], 'status'],
    ['chek', ['start', 'check', 'done'], 'check'],
    ['email', KINDS, null],
    ['teleport', KINDS, null],
    ['x', KINDS, null],
    ['start', KINDS, null],
  ] as const)('%s → %s', (word, candidates, expected) => {
    expect(closestName(word, candidates)).toBe(expected)
  })
})
