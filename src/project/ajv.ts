// The ajv instances the loader uses. Node settings and file shapes are our own schemas; input
// schemas are the user's (unknown keywords ignored, never fatal). Validators are compiled once.
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { NodeKind } from '../nodes/types.js'
import type { JsonSchema } from './model.js'
import { CONDITION_SCHEMA } from './shapes.js'

// verbose: errors carry the schema and data, which the messages need (oneOf branches, enum values).
const shapeAjv = new Ajv({ strict: false, allErrors: true, verbose: true })
const compiled = new WeakMap<object, ValidateFunction>()

/** Definitions every node settings schema may refer to (`$ref: '#/$defs/condition'`). */
export const SHARED_DEFS: Record<string, JsonSchema> = { condition: CONDITION_SCHEMA }

/** A validator for one of our own schemas (file shapes), compiled on first use. */
export function shapeValidator(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema)
  if (!validate) {
    validate = shapeAjv.compile({ ...schema, $defs: { ...SHARED_DEFS, ...(schema.$defs as object | undefined) } })
    compiled.set(schema, validate)
  }
  return validate
}

export function settingsValidator(kind: NodeKind): ValidateFunction {
  return shapeValidator(kind.settingsSchema)
}

let inputAjv: Ajv | undefined

function getInputAjv(): Ajv {
  if (!inputAjv) {
    inputAjv = new Ajv({ strict: false, allErrors: true, verbose: true, useDefaults: true })
    addFormats.default(inputAjv)
  }
  return inputAjv
}

/** Null when the user's schema is a valid JSON Schema; otherwise where (a path inside the schema)
 *  and what is wrong. Checked against the meta-schema only: compiling every input schema would
 *  slow down every load, and the engine compiles them anyway. */
export function inputSchemaProblem(schema: JsonSchema): { path: string[]; message: string } | null {
  const ajv = getInputAjv()
  if (ajv.validateSchema(schema)) return null
  const first = ajv.errors?.[0]
  const path = (first?.instancePath ?? '').split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  return { path, message: `${path.length ? `${path.join('.')} ` : ''}${first?.message ?? 'is not valid'}` }
}

/**
 * Compiles one of the user's input schemas, configured like the Run API's (formats, defaults),
 * and forgets it again so reloads do not grow the cache. Throws when the schema is invalid.
 */
export function compileInputSchema(schema: JsonSchema): ValidateFunction {
  const ajv = getInputAjv()
  try {
    return ajv.compile(schema)
  } finally {
    ajv.removeSchema(schema)
  }
}
