// schema/flow.schema.json is generated from the node registry; editors validate flow files with it.
import { Ajv } from 'ajv'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { nodeKinds } from '../../src/nodes/registry.js'
import { buildFlowSchema, formatFlowSchema } from '../../src/project/schema.js'

const ROOT = join(import.meta.dirname, '..', '..')
const SCHEMA_FILE = join(ROOT, 'schema', 'flow.schema.json')

// `UPDATE_FLOW_SCHEMA=1 npx vitest run test/project/schema.test.ts` rewrites the committed file
// (scripts/build-flow-schema.mjs does the same from dist/).
if (process.env.UPDATE_FLOW_SCHEMA) writeFileSync(SCHEMA_FILE, formatFlowSchema())

const validator = () => new Ajv({ strict: false, allErrors: true }).compile(buildFlowSchema())
const readFlow = (path: string): unknown => parse(readFileSync(path, 'utf8'))

describe('flow.schema.json', () => {
  it('the committed file equals buildFlowSchema() (pretty JSON, 2 spaces, trailing newline)', () => {
    const committed = readFileSync(SCHEMA_FILE, 'utf8')
    expect(committed).toBe(`${JSON.stringify(buildFlowSchema(), null, 2)}\n`)
  })

  it('describes every node kind', () => {
    const defs = buildFlowSchema().$defs as Record<string, unknown>
    for (const type of nodeKinds.keys()) expect(defs).toHaveProperty(`${type}Node`)
    expect(defs).toHaveProperty('condition')
  })

  it('accepts every flow of fixtures/example', () => {
    const validate = validator()
    const dir = join(ROOT, 'fixtures', 'example', 'flows')
    for (const file of readdirSync(dir)) {
      const valid = validate(readFlow(join(dir, file)))
      expect({ file, errors: validate.errors ?? null }).toEqual({ file, errors: null })
      expect(valid).toBe(true)
    }
  })

  it.each([
    ['unknown-setting', 'flows/check.yaml', '/nodes/1'],
    ['wrong-setting-type', 'flows/call.yaml', '/nodes/1/timeoutMs'],
    ['bad-method', 'flows/method.yaml', '/nodes/0/method'],
    ['unknown-node-type', 'flows/kind.yaml', '/nodes/2/type'],
    ['bad-condition', 'flows/cond.yaml', '/nodes/1/condition/all/0/op'],
    ['unknown-top-key', 'flows/extra.yaml', ''],
    ['end-with-next', 'flows/endnext.yaml', '/nodes/1'],
  ])('rejects fixtures/broken/%s', (fixture, file, instancePath) => {
    const validate = validator()
    expect(validate(readFlow(join(ROOT, 'fixtures', 'broken', fixture, file)))).toBe(false)
    expect(validate.errors?.map((e) => e.instancePath)).toContain(instancePath)
  })
})
