// The validators the loader uses, and the one factory of ajv instances for user-written schemas
// (`createUserSchemaAjv`, which the engine uses too). Our own schemas (file shapes, node settings) run
// precompiled validators (dist/generated/, built by `npm run build`); ajv itself is loaded only when
// something must be compiled: the user's schemas, our schemas when the generated code is missing or
// out of date, and the settings of node kinds registered after the build.
import { didYouMean } from './suggest.js'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { Ajv, ValidateFunction } from 'ajv'
import type { FormatsPlugin } from 'ajv-formats'
import type { NodeKind } from '../nodes/types.js'
import { builtinSchemas, INPUT_AJV_OPTIONS, schemaFingerprint, SHAPE_AJV_OPTIONS, withSharedDefs } from './builtin-schemas.js'
import type { JsonSchema } from '../model/project.js'
import { patternEngine } from './safe-pattern.js'

export { SHARED_DEFS } from './builtin-schemas.js'

// ajv and ajv-formats are CommonJS: required on first use, so loads that need no compiling skip them.
const require = createRequire(import.meta.url)
const loadAjv = () => (require('ajv') as typeof import('ajv')).Ajv
const loadFormats = () => (require('ajv-formats') as typeof import('ajv-formats')).default

/**
 * dist/generated/ (scripts/build-validators.mjs): two folders up from this module, whether it runs as
 * src/project/ajv.ts (vitest), dist/project/ajv.js or a chunk in dist/bin/. Missing (no build yet):
 * everything is compiled instead.
 */
const GENERATED_DIR = new URL('../../dist/generated/', import.meta.url)

function loadGenerated(file: string): Record<string, unknown> {
  try {
    return require(fileURLToPath(new URL(file, GENERATED_DIR))) as Record<string, unknown>
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return {}
    throw error
  }
}

const compiled = new WeakMap<object, ValidateFunction>()
let precompiled: Map<object, ValidateFunction> | undefined
let shapeAjv: Ajv | undefined

/** Generated validators by the schema object they check; a schema changed since the build has none
 *  (it is compiled here, as correct and only slower). */
function precompiledValidators(): Map<object, ValidateFunction> {
  if (!precompiled) {
    precompiled = new Map()
    const generated = loadGenerated('shape-validators.cjs')
    const fingerprints = (generated.fingerprints ?? {}) as Record<string, string>
    for (const { name, source } of builtinSchemas()) {
      const validate = generated[name]
      if (typeof validate === 'function' && fingerprints[name] === schemaFingerprint(name, source)) precompiled.set(source, validate as ValidateFunction)
    }
  }
  return precompiled
}

/** A validator for one of our own schemas (file shapes), compiled on first use unless precompiled. */
export function shapeValidator(schema: JsonSchema): ValidateFunction {
  let validate = precompiledValidators().get(schema) ?? compiled.get(schema)
  if (!validate) {
    validate = compileShapeSchema(schema)
    compiled.set(schema, validate)
  }
  return validate
}

/** Compiles one of our own schemas with ajv (what the generated code was built from). */
export function compileShapeSchema(schema: JsonSchema): ValidateFunction {
  shapeAjv ??= new (loadAjv())(SHAPE_AJV_OPTIONS)
  return shapeAjv.compile(withSharedDefs(schema))
}

export function settingsValidator(kind: NodeKind): ValidateFunction {
  return shapeValidator(kind.settingsSchema)
}

/** ajv's class and ajv-formats' plugin: the engine imports them (the CLI bundle inlines them), the loader requires them on first use. */
export interface AjvLibrary {
  Ajv: typeof Ajv
  addFormats: FormatsPlugin
}

/**
 * The one way an ajv for user-written JSON Schemas is made (a Start's inputs, checked at run time by
 * the engine and at load time against a schedule's input), so a schema means the same everywhere:
 * INPUT_AJV_OPTIONS (`strict: false`: a user's unknown keyword such as `x-…` is ignored, never fatal,
 * and ajv logs no strict-mode warnings about the user's schema; defaults; every error, verbose) plus
 * formats and `pattern`s on RE2 (safe-pattern.ts: linear time, so no input can make validation
 * backtrack for seconds). `validateSchema: false`: `compileUserSchema` checks the schema first, with
 * the precompiled meta-schema check (ajv's own compiled the draft-07 meta-schema once per instance,
 * half of the compile time of a project's input schemas: ~35 ms of `flowctl test` on the example).
 * Only two things differ by use: `coerce` (path, query and header values and form fields arrive as
 * text; 'array' also wraps a single value for an array-typed property) and `allErrors` (a body is
 * checked first by a validator that stops at its first error, flow/input-errors.ts).
 */
export function createUserSchemaAjv(library: AjvLibrary, use: { coerce: boolean; allErrors: boolean }): Ajv {
  const ajv = new library.Ajv({
    ...INPUT_AJV_OPTIONS,
    allErrors: use.allErrors,
    coerceTypes: use.coerce ? 'array' : false,
    validateSchema: false,
    code: { regExp: patternEngine },
  })
  library.addFormats(ajv)
  return ajv
}

/**
 * Compiles a user's schema with an ajv from `createUserSchemaAjv`, after the meta-schema check, and
 * forgets it again, so reloaded flows do not accumulate in ajv's cache. Throws when the schema is
 * invalid (the loader reports that on the Start node first).
 */
export function compileUserSchema(ajv: Ajv, schema: JsonSchema): ValidateFunction {
  const problem = inputSchemaProblem(schema)
  if (problem) throw new Error(`schema is invalid: ${problem.message}`)
  try {
    return ajv.compile(schema)
  } finally {
    ajv.removeSchema(schema)
  }
}

let inputAjv: Ajv | undefined

function getInputAjv(): Ajv {
  inputAjv ??= createUserSchemaAjv({ Ajv: loadAjv(), addFormats: loadFormats() }, { coerce: false, allErrors: true })
  return inputAjv
}

type MetaCheck = ((schema: unknown) => boolean) & { errors?: ValidateFunction['errors'] }
let generatedMeta: { draft07?: MetaCheck } | undefined

/** `ajv.validateSchema` for an input schema: the precompiled draft-07 check when the schema names
 *  no other meta-schema, else ajv's own. */
function checkAgainstMetaSchema(schema: JsonSchema): { valid: boolean; errors: ValidateFunction['errors'] } {
  generatedMeta ??= loadGenerated('meta-validator.cjs') as { draft07?: MetaCheck }
  const draft07 = generatedMeta.draft07
  if (schema.$schema === undefined && draft07) {
    const valid = draft07(schema)
    return { valid, errors: draft07.errors }
  }
  const ajv = getInputAjv()
  const valid = ajv.validateSchema(schema) as boolean
  return { valid, errors: ajv.errors }
}

/** Null when the user's schema is a valid JSON Schema; otherwise where (a path inside the schema)
 *  and what is wrong. Checked against the meta-schema only: compiling every input schema would
 *  slow down every load, and the engine compiles them anyway. */
export function inputSchemaProblem(schema: JsonSchema): { path: string[]; message: string } | null {
  const { valid, errors } = checkAgainstMetaSchema(schema)
  if (valid) return null
  // An enum problem (such as a misspelt `type`) says more than the anyOf around it: prefer it, with its values.
  const first = errors?.find((error) => error.keyword === 'enum') ?? errors?.[0]
  const path = (first?.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  const where = path.length ? `${path.join('.')} ` : ''
  if (first?.keyword === 'enum') {
    const values = ((first.params as { allowedValues?: unknown[] }).allowedValues ?? []).map(String)
    const hint = typeof first.data === 'string' ? didYouMean(first.data, values) : ''
    return { path, message: `${where}must be one of: ${values.join(', ')} (not ${JSON.stringify(first.data)})${hint}` }
  }
  return { path, message: `${where}${first?.message ?? 'is not valid'}` }
}

/** Compiles one of the user's input schemas as the Run API does for a JSON body (formats, defaults). Throws when the schema is invalid. */
export function compileInputSchema(schema: JsonSchema): ValidateFunction {
  return compileUserSchema(getInputAjv(), schema)
}
