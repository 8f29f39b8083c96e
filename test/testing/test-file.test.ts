// Every load problem of a test file, with its position (src/testing/test-file.ts), against the real
// fixtures/testing project.
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadProject } from '../../src/project/load.js'
import type { Project } from '../../src/model/project.js'
import { checkTestFile } from '../../src/testing/test-file.js'
import { ROOT } from '../helpers.js'

let project: Project
beforeAll(async () => {
  project = await loadProject(join(ROOT, 'fixtures', 'testing'))
})

const problemsOf = (text: string) => checkTestFile('tests/x.test.yaml', text, project).problems.map((p) => `${p.line}:${p.column}: ${p.message}`)

describe('checkTestFile', () => {
  it.each([
    ['YAML syntax', 'flow: [oops\n', ['1:7: YAML syntax error: this "[" is never closed; add "]" where it should end']],
    ['no cases', 'flow: checkout\n', ['1:1: a test file needs "cases"']],
    [
      'an unknown key in a case',
      'flow: checkout\ncases:\n  - name: a\n    expect: {}\n    mock: {}\n',
      ['5:5: "mock" is not allowed in cases[0] (did you mean "mocks"?) (allowed: name, input, secrets, mocks, documents, now, expect)'],
    ],
    [
      'an unknown flow',
      'flow: nope\ncases:\n  - { name: a, expect: {} }\n',
      ['1:7: there is no flow with the slug "nope" to test (flows: checkout, line-total, order-total)'],
    ],
    [
      'a mock for a node that is not an http node of the flow or its sub-flows',
      'flow: checkout\ncases:\n  - name: a\n    mocks: { save: { status: 200 } }\n    expect: {}\n',
      ['4:14: there is no http node "save" in flow "checkout" or the flows it calls (http nodes: shipping)'],
    ],
    [
      'a now without a timezone',
      'flow: checkout\ncases:\n  - name: a\n    now: 2026-01-01T09:00\n    expect: {}\n',
      ['4:10: now must be an ISO 8601 time with a timezone, like 2026-01-01T09:00:00Z (got "2026-01-01T09:00")'],
    ],
    [
      'an expected port of an unknown node',
      'flow: order-total\ncases:\n  - name: a\n    expect: { ports: [{ nodeId: nope, port: "true" }] }\n',
      ['4:33: flow "order-total" has no node "nope"'],
    ],
    [
      'a port the node does not have',
      'flow: order-total\ncases:\n  - name: a\n    expect: { ports: [{ nodeId: check, port: yes }] }\n',
      ['4:46: node "check" has no port "yes" (ports: true, false)'],
    ],
    [
      'a failing node that does not exist',
      'flow: checkout\ncases:\n  - name: a\n    expect: { failedNodeId: nope }\n',
      ['4:29: flow "checkout" has no node "nope"'],
    ],
    [
      'two seeded documents with one _id',
      'flow: checkout\ncases:\n  - name: a\n    documents: { a: [{ _id: x }], b: [{ _id: x }] }\n    expect: {}\n',
      ['4:46: two seeded documents have the _id "x" (the other in a); give each its own'],
    ],
    [
      'a seeded document that is not an object',
      'flow: checkout\ncases:\n  - name: a\n    documents: { a: [1] }\n    expect: {}\n',
      ['4:22: cases[0].documents.a[0] must be a mapping (key: value)'],
    ],
    [
      'a seeded collection with a bad name',
      'flow: checkout\ncases:\n  - name: a\n    documents: { "a b": [] }\n    expect: {}\n',
      ['4:18: "a b" is not a collection name (letters, digits, _ and -)'],
    ],
    [
      'two cases with one name',
      'flow: checkout\ncases:\n  - { name: a, expect: {} }\n  - { name: a, expect: {} }\n',
      ['4:13: two cases of this file are named "a"; give each its own name'],
    ],
  ])('%s', (_name, text, expected) => {
    expect(problemsOf(text)).toEqual(expected)
  })

  it('reads a good file into cases: inputs as text, mocks with defaults, now as a date', () => {
    const result = checkTestFile(
      'tests/x.test.yaml',
      'flow: order-total\ncases:\n  - name: a\n    input: { query: { n: 2 }, headers: { X-Tenant: t1 } }\n    mocks: { shipping: { body: ok } }\n    now: 2026-01-01T09:00:00+01:00\n    expect: { status: 200 }\n',
      project,
    )
    expect(result.problems).toEqual([])
    const [testCase] = result.testFile!.cases
    expect(testCase).toMatchObject({
      name: 'a',
      line: 3,
      input: { query: { n: '2' }, headers: { 'x-tenant': 't1' } },
      expect: { status: 200, failedNodeId: null },
    })
    expect(testCase!.mocks.get('shipping')).toEqual({ status: 200, headers: {}, body: 'ok' })
    expect(testCase!.now?.toISOString()).toBe('2026-01-01T08:00:00.000Z')
    expect(testCase!.documents).toEqual({})
  })
})
