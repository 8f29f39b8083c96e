// User-written JSON Schemas compile through one factory (createUserSchemaAjv), so a Start's schema
// means the same to the engine (Run API, flowctl run/test) and to the loader (schedule inputs).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { describe, expect, it } from 'vitest'
import type { JsonSchema } from '../../src/model/project.js'
import { compileInputSchema, compileUserSchema, createUserSchemaAjv } from '../../src/project/ajv.js'

const LIBRARY = { Ajv, addFormats: addFormats.default }

const SCHEMA: JsonSchema = {
  type: 'object',
  'x-owner': 'team-a', // an extension keyword: ignored, never fatal
  properties: {
    email: { type: 'string', format: 'email' },
    code: { type: 'string', pattern: '^(a+)+$' }, // catastrophic for a backtracking engine
    count: { type: 'integer', default: 1 },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['email'],
}

function srcFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? srcFiles(path) : path.endsWith('.ts') ? [path] : []
  })
}

describe('createUserSchemaAjv', () => {
  it('ignores unknown keywords, checks formats, applies defaults and reports every error', () => {
    const validate = compileUserSchema(createUserSchemaAjv(LIBRARY, { coerce: false, allErrors: true }), SCHEMA)
    const data: Record<string, unknown> = { email: 'a@example.com' }
    expect(validate(data)).toBe(true)
    expect(data.count).toBe(1)
    expect(validate({ email: 'not an email', count: 'x' })).toBe(false)
    expect(validate.errors?.map((error) => error.instancePath).sort()).toEqual(['/count', '/email'])
    // verbose: the errors carry the schema and data the loader's messages quote
    expect(validate.errors?.[0]).toHaveProperty('parentSchema')
  })

  it('runs patterns in linear time: a long near-match is rejected at once', () => {
    const validate = compileUserSchema(createUserSchemaAjv(LIBRARY, { coerce: false, allErrors: true }), SCHEMA)
    const started = performance.now()
    expect(validate({ email: 'a@example.com', code: `${'a'.repeat(5000)}!` })).toBe(false)
    expect(performance.now() - started).toBeLessThan(2000) // a backtracking engine would not finish
  })

  it('coerces text only where asked, and stops at the first error only where asked', () => {
    const coercing = compileUserSchema(createUserSchemaAjv(LIBRARY, { coerce: true, allErrors: true }), SCHEMA)
    const text: Record<string, unknown> = { email: 'a@example.com', count: '3', tags: 'one' }
    expect(coercing(text)).toBe(true)
    expect(text).toMatchObject({ count: 3, tags: ['one'] })
    const strict = compileUserSchema(createUserSchemaAjv(LIBRARY, { coerce: false, allErrors: true }), SCHEMA)
    expect(strict({ email: 'a@example.com', count: '3' })).toBe(false)
    const first = compileUserSchema(createUserSchemaAjv(LIBRARY, { coerce: false, allErrors: false }), SCHEMA)
    expect(first({ email: 1, count: 'x' })).toBe(false)
    expect(first.errors).toHaveLength(1)
  })

  it('compileUserSchema refuses an invalid schema with the meta-schema problem, and keeps nothing cached', () => {
    const ajv = createUserSchemaAjv(LIBRARY, { coerce: false, allErrors: true })
    expect(() => compileUserSchema(ajv, { type: 'strnig' })).toThrow(/schema is invalid: type must be one of: .*string/)
    const schema: JsonSchema = { $id: 'https://example.com/once', type: 'string' }
    compileUserSchema(ajv, schema)
    expect(ajv.getSchema('https://example.com/once')).toBeUndefined()
    expect(() => compileUserSchema(ajv, schema)).not.toThrow() // compiling the same $id again is no clash
  })

  it("the loader's compileInputSchema (schedule inputs) judges like the engine's body validator", () => {
    const engine = compileUserSchema(createUserSchemaAjv(LIBRARY, { coerce: false, allErrors: true }), SCHEMA)
    const loader = compileInputSchema(SCHEMA)
    const samples = [{ email: 'a@example.com' }, { email: 'nope' }, { email: 'a@example.com', count: 2.5 }, {}, { email: 'a@b.co', tags: ['x', 1] }]
    for (const sample of samples) {
      expect(loader(structuredClone(sample)), JSON.stringify(sample)).toBe(engine(structuredClone(sample)))
      expect(loader.errors ?? null).toEqual(engine.errors ?? null)
    }
  })

  it('is the only place src/ makes an ajv for user schemas (build-time precompile.ts aside)', () => {
    const root = join(import.meta.dirname, '../../src')
    const makers = srcFiles(root)
      .filter((file) => /new Ajv\b|new \(loadAjv\(\)\)|new library\.Ajv/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file))
      .sort()
    expect(makers).toEqual(['project/ajv.ts', 'project/precompile.ts'])
  })
})
