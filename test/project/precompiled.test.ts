// The precompiled validators (dist/generated/, written by `npm run build`) are current and
// behave exactly like the ajv-compiled ones they replace; a load of the example project needs
// neither ajv's compiler nor cron-parser.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Ajv as AjvType } from 'ajv'
import { nodeKinds } from '../../src/nodes/registry.js'
import { compileShapeSchema, inputSchemaProblem, shapeValidator } from '../../src/project/ajv.js'
import { builtinSchemas, INPUT_AJV_OPTIONS } from '../../src/project/builtin-schemas.js'
import type { JsonSchema } from '../../src/model/project.js'
import { GENERATED_FILES, metaValidatorSource, shapeValidatorsSource } from '../../src/project/precompile.js'
import { FLOW_FILE_SCHEMA, PROJECT_FILE_SCHEMA } from '../../src/model/shapes.js'
import { TEST_FILE_SCHEMA } from '../../src/model/test-file-shape.js'

const ROOT = join(import.meta.dirname, '..', '..')
const require = createRequire(import.meta.url)
const { Ajv } = require('ajv') as typeof import('ajv')
const addFormats = require('ajv-formats') as typeof import('ajv-formats')

const generatedPath = (file: string) => join(ROOT, 'dist', 'generated', file)

describe('generated validator modules', () => {
  it('are build output, not sources: dist/generated/, and nothing under src/', () => {
    expect(existsSync(join(ROOT, 'src', 'project', 'generated'))).toBe(false)
    expect(existsSync(generatedPath(GENERATED_FILES.shapes)), 'run `npm run build` first').toBe(true)
  })

  it('are what the build writes from the current schemas (run `npm run build` after changing a schema)', () => {
    const read = (file: string) => readFileSync(generatedPath(file), 'utf8')
    expect(read(GENERATED_FILES.shapes)).toBe(shapeValidatorsSource())
    expect(read(GENERATED_FILES.meta)).toBe(metaValidatorSource())
  })

  it('are used for every built-in schema', () => {
    const generated = require(generatedPath(GENERATED_FILES.shapes)) as Record<string, unknown>
    for (const { name, source } of builtinSchemas()) expect(shapeValidator(source), name).toBe(generated[name])
  })
})

/** Values with many kinds of mistakes, for the schema under test. */
const WRONG_VALUES: unknown[] = [
  null,
  3,
  'text',
  [],
  {},
  { nxt: 'a', nodes: 'x', name: '', schedule: { cron: 5, enabled: 'yes', extra: 1 } },
  {
    projectId: 7,
    name: '',
    limits: { runTimeoutMs: 0, foo: 1 },
    notify: { channels: { a: { type: 'webhook' }, b: { type: 'file', path: '' }, c: { type: 'x' } }, alerts: [{ flows: [1] }], digests: [{}] },
  },
  { method: 'fetch', inputs: { body: 3 }, auth: { type: 'bearer' }, status: 99, headers: { a: 1 }, body: { x: 1 } },
  { condition: { all: [{ left: 1, op: 'equals' }, { not: { any: [] } }, { left: 1 }, { all: [], any: [] }] } },
  { cases: [{ value: 1 }, { when: 2 }, 'x'], value: '{{a}}', url: 5, method: 'GET', timeoutMs: 1.5 },
  { collection: '', document: [], values: 3, condition: { left: 1, op: 'eq', right: 2, extra: true } },
  { flow: '', cases: [{ name: '', mocks: { a: { error: 'timeout', status: 200 }, b: { status: 99 } }, expect: { ports: [{ nodeId: 1 }], status: 'x' } }, {}] },
]

describe('precompiled validators', () => {
  it('report exactly what ajv-compiled ones report, for every built-in schema', () => {
    const schemas: JsonSchema[] = [FLOW_FILE_SCHEMA, PROJECT_FILE_SCHEMA, TEST_FILE_SCHEMA, ...[...nodeKinds.values()].map((k) => k.settingsSchema)]
    for (const schema of schemas) {
      const precompiled = shapeValidator(schema)
      const compiled = compileShapeSchema(schema)
      for (const value of WRONG_VALUES) {
        const expected = { valid: compiled(structuredClone(value)), errors: compiled.errors ?? null }
        const actual = { valid: precompiled(structuredClone(value)), errors: precompiled.errors ?? null }
        expect(actual).toEqual(expected)
      }
    }
  })

  it('check input schemas against the meta-schema as ajv.validateSchema does', () => {
    const ajv: AjvType = new Ajv(INPUT_AJV_OPTIONS)
    addFormats.default(ajv)
    const schemas: JsonSchema[] = [
      { type: 'object', properties: { a: { type: 'string', format: 'email' } } },
      { type: 'objekt' },
      { type: 'object', required: 'a' },
      { properties: { a: { type: 3, minLength: -1 } }, additionalProperties: 'no' },
      { items: [{ type: 'string' }, { enum: [] }], pattern: '(' },
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'nope' },
    ]
    for (const schema of schemas) {
      const valid = ajv.validateSchema(structuredClone(schema))
      // The problem told is ajv's first error, or its enum error (which lists the allowed values).
      const first = ajv.errors?.find((error) => error.keyword === 'enum') ?? ajv.errors?.[0]
      const problem = inputSchemaProblem(structuredClone(schema))
      expect(problem === null).toBe(valid)
      if (first?.keyword === 'enum') expect(problem?.message).toContain(`must be one of: ${(first.params.allowedValues as string[]).join(', ')}`)
      else if (first) expect(problem?.message).toContain(first.message)
    }
  })
})

describe('loading the example project', () => {
  it("loads neither ajv's compiler nor cron-parser (dist/, built by `npm run build`)", () => {
    const load = join(ROOT, 'dist', 'project', 'load.js')
    expect(existsSync(load), 'dist/ is missing: run `npm run build` first').toBe(true)
    const script = `
      import { createRequire } from 'node:module'
      const { loadProject } = await import(${JSON.stringify(load)})
      const project = await loadProject(${JSON.stringify(join(ROOT, 'fixtures', 'example'))})
      const loaded = Object.keys(createRequire(import.meta.url).cache)
      console.log(JSON.stringify({ flows: project.flows.size, loaded }))`
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { flows: number; loaded: string[] }
    expect(out.flows).toBe(12)
    const heavy = out.loaded.filter((path) => /node_modules[\\/](ajv[\\/]dist[\\/](core|compile)|cron-parser|luxon)/.test(path))
    expect(heavy).toEqual([])
  })
})
