// schema/test.schema.json is generated from src/model/test-file-shape.ts; editors check test files with it.
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { buildTestSchema, formatTestSchema } from '../../src/model/test-file-shape.js'

const ROOT = join(import.meta.dirname, '..', '..')

function validator() {
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  return ajv.compile(buildTestSchema())
}

describe('test.schema.json', () => {
  it('the committed file equals formatTestSchema() (run scripts/build-test-schema.mjs after a change)', () => {
    expect(readFileSync(join(ROOT, 'schema', 'test.schema.json'), 'utf8')).toBe(formatTestSchema())
  })

  it('accepts every test file of fixtures/example, fixtures/testing and the init template', () => {
    const validate = validator()
    const dirs = ['fixtures/example/tests', 'fixtures/testing/tests', 'templates/basic/tests']
    let seen = 0
    for (const dir of dirs) {
      for (const file of readdirSync(join(ROOT, dir))) {
        const valid = validate(parse(readFileSync(join(ROOT, dir, file), 'utf8')))
        expect({ file, errors: validate.errors ?? null }).toEqual({ file, errors: null })
        expect(valid).toBe(true)
        seen++
      }
    }
    expect(seen).toBeGreaterThanOrEqual(8)
  })

  it.each([
    ['a case without expect', { flow: 'f', cases: [{ name: 'x' }] }],
    ['a mock with an unknown error', { flow: 'f', cases: [{ name: 'x', mocks: { a: { error: 'slow' } }, expect: {} }] }],
    ['a timeout mock with a status too', { flow: 'f', cases: [{ name: 'x', mocks: { a: { error: 'timeout', status: 200 } }, expect: {} }] }],
    ['a now that is not a time', { flow: 'f', cases: [{ name: 'x', now: 'tomorrow', expect: {} }] }],
    ['an unknown expectation', { flow: 'f', cases: [{ name: 'x', expect: { headers: {} } }] }],
  ])('rejects %s', (_name, file) => {
    expect(validator()(file)).toBe(false)
  })
})
