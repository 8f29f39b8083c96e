// Validating a run's inputs against the Start node's JSON Schemas (ajv + formats).
// Validators are compiled once per flow version; Flow objects are replaced on reload.
// The CLI bundle (scripts/bundle-cli.mjs) inlines ajv and ajv-formats: one file instead of ~90 that
// Node would resolve, read and wrap one by one.
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { BodyType, Flow, JsonSchema, StartInputs } from '../model/project.js'
import { compileUserSchema, createUserSchemaAjv } from '../project/ajv.js'
import type { RunInput } from '../model/run.js'
import { bodyErrors, type BodyCheck, formatErrors, type InputLocation, isViewSafe } from './input-errors.js'
import { MORE_ERRORS, POSSIBLY_MORE_ERRORS } from './reason.js'
import { unstorableTextErrors } from './unstorable-text.js'
import { isRecord } from '../internal/is-record.js'

/** The validated inputs by location (what history stores and a replay sends again). */
export interface ValidatedInput {
  body?: unknown
  path: Record<string, unknown>
  query: Record<string, unknown>
  headers: Record<string, unknown>
  /** How a non-JSON body arrived, so a replay sends it through the same validation (absent: JSON). */
  bodyType?: 'form' | 'text'
}

export type InputsResult = { ok: true; values: Record<string, unknown>; input: ValidatedInput } | { ok: false; errors: string[] }

interface ParameterValidator {
  location: Exclude<InputLocation, 'body'>
  validate: ValidateFunction
  /** Declared property names, and which of them are arrays (repeated query keys stay arrays). */
  properties: { name: string; lookup: string; isArray: boolean; isBoolean: boolean }[]
}

interface BodyValidator {
  check: BodyCheck
  /** useDefaults writes into the data: clone first when the schema has defaults (callers' objects stay untouched). */
  hasDefaults: boolean
}

interface CompiledInputs {
  parameters: ParameterValidator[]
  /** Every declared path, query and header input name (`start.<name>`). */
  parameterNames: string[]
  body: BodyValidator | null
  /** The body schema with coercion, for form fields (compiled on the first form request). */
  formBody?: BodyValidator | null
  /** The Start takes only text: the body is start.body. */
  textOnly: boolean
  bodySchema: JsonSchema | undefined
}

// One factory (project/ajv.ts) for every ajv that compiles a user's schema. Parameters arrive as
// text, so they are coerced; the body is not. A body is checked first by a validator that stops at
// its first error, and only an invalid one again with every error (input-errors.ts: a huge invalid
// body must stay cheap to reject).
const AJV_LIBRARY = { Ajv, addFormats: addFormats.default }
const parameterAjv = createUserSchemaAjv(AJV_LIBRARY, { coerce: true, allErrors: true })
const formFirstAjv = createUserSchemaAjv(AJV_LIBRARY, { coerce: true, allErrors: false })
const bodyAjv = createUserSchemaAjv(AJV_LIBRARY, { coerce: false, allErrors: true })
const bodyFirstAjv = createUserSchemaAjv(AJV_LIBRARY, { coerce: false, allErrors: false })

const compiledByFlow = new WeakMap<Flow, CompiledInputs>()

/** Validates, coerces and merges the inputs: body fields, then path, query and header inputs. */
export function validateInputs(flow: Flow, input: RunInput): InputsResult {
  const compiled = compiledInputsOf(flow)
  const errors: string[] = []
  // The uncounted last line of a large invalid body's errors, put back after the other errors.
  let uncounted: string | undefined
  const addBodyErrors = (found: string[]) => {
    const last = found.at(-1)
    if (last === MORE_ERRORS || last === POSSIBLY_MORE_ERRORS) {
      uncounted = last
      found = found.slice(0, -1)
    }
    // A loop, not push(...found): a list of 100,000 errors is more arguments than a call takes.
    for (const error of found) errors.push(error)
  }
  const values: Record<string, unknown> = {}
  const validated: ValidatedInput = { path: {}, query: {}, headers: {} }

  // NUL characters and lone surrogates cannot be stored (PostgreSQL): a 400 before anything runs.
  const unstorable = unstorableInputErrors(input)
  if (unstorable.length) return { ok: false, errors: unstorable }

  const bodyType = input.bodyType ?? (compiled.textOnly ? 'text' : 'json')
  if (bodyType === 'text') {
    // The text is one input, start.body; undefined (no body) is checked as an empty text.
    const text = input.body === undefined ? '' : input.body
    const found = compiled.body ? bodyErrors(compiled.body.check, text) : []
    if (found.length) addBodyErrors(found)
    else {
      values.body = text
      validated.body = text
      validated.bodyType = 'text'
    }
  } else if (bodyType === 'form' && input.body !== undefined) {
    const form = formValidatorOf(compiled)
    const body = structuredClone(input.body) // coercion and defaults write into the data
    const found = form ? bodyErrors(form.check, body) : []
    if (found.length) addBodyErrors(found)
    else {
      // Stored as its validated fields: replayed as a form again, they pass the same coercion unchanged.
      Object.assign(values, body)
      validated.body = body
      validated.bodyType = 'form'
    }
  } else if (compiled.body) {
    let body = input.body === undefined ? {} : input.body
    if (compiled.body.hasDefaults && typeof body === 'object' && body !== null) body = structuredClone(body)
    const found = bodyErrors(compiled.body.check, body)
    if (found.length) addBodyErrors(found)
    else {
      validated.body = body
      if (isRecord(body)) Object.assign(values, body)
    }
  }

  // Inputs keep their place (SPEC §19): a body field named like a path, query or header input never
  // stands in for it, even when the request left that input out.
  for (const name of compiled.parameterNames) delete values[name]
  for (const parameter of compiled.parameters) {
    const data = pickParameters(parameter, input)
    if (parameter.validate(data)) {
      Object.assign(values, data)
      validated[parameter.location] = data
    } else errors.push(...formatErrors(parameter.location, parameter.validate.errors))
  }

  if (!errors.length) return { ok: true, values, input: validated }
  return { ok: false, errors: uncounted ? [...new Set(errors), uncounted] : [...new Set(errors)] }
}

function unstorableInputErrors(input: RunInput): string[] {
  return [
    ...unstorableTextErrors('body', input.body),
    ...unstorableTextErrors('path', input.path),
    ...unstorableTextErrors('query', input.query),
    ...unstorableTextErrors('headers', input.headers),
  ]
}

/** Compiles the flow's input schemas (cached per flow). The loader has already checked that they compile. */
export function compiledInputsOf(flow: Flow): CompiledInputs {
  let compiled = compiledByFlow.get(flow)
  if (!compiled) {
    compiled = compileInputs(flow.start?.inputs ?? {}, flow.start?.accept ?? ['json'])
    compiledByFlow.set(flow, compiled)
  }
  return compiled
}

function compileInputs(inputs: StartInputs, flowAccept: readonly BodyType[]): CompiledInputs {
  const parameters: ParameterValidator[] = []
  for (const location of ['path', 'query', 'headers'] as const) {
    const schema = inputs[location]
    if (!schema) continue
    const properties = propertiesOf(schema)
    // Every path property is one URL segment, so all of them are required.
    const effective = location === 'path' ? { ...schema, required: Object.keys(properties) } : schema
    parameters.push({
      location,
      validate: compileUserSchema(parameterAjv, effective),
      properties: Object.entries(properties).map(([name, property]) => ({
        name,
        lookup: location === 'headers' ? name.toLowerCase() : name,
        isArray: isArraySchema(property),
        isBoolean: isRecord(property) && property.type === 'boolean',
      })),
    })
  }
  const body = inputs.body ? { check: bodyCheck(bodyFirstAjv, bodyAjv, inputs.body), hasDefaults: hasDefaultKeyword(inputs.body) } : null
  const textOnly = flowAccept.length === 1 && flowAccept[0] === 'text'
  const parameterNames = parameters.flatMap((parameter) => parameter.properties.map((property) => property.name))
  return { parameters, parameterNames, body, textOnly, bodySchema: inputs.body }
}

/** Form fields arrive as text: the body schema compiled with query-style coercion, once. */
function formValidatorOf(compiled: CompiledInputs): BodyValidator | null {
  if (compiled.formBody === undefined) {
    compiled.formBody = compiled.bodySchema ? { check: bodyCheck(formFirstAjv, parameterAjv, compiled.bodySchema), hasDefaults: true } : null
  }
  return compiled.formBody
}

/** The two validators of a body schema: the first-error one now, the every-error one when first needed. */
function bodyCheck(firstAjv: Ajv, allAjv: Ajv, schema: JsonSchema): BodyCheck {
  let all: ValidateFunction | undefined
  return { first: compileUserSchema(firstAjv, schema), all: () => (all ??= compileUserSchema(allAjv, schema)), viewSafe: isViewSafe(schema) }
}

/** The declared parameters present in the input: arrays only for array-typed properties. */
function pickParameters(parameter: ParameterValidator, input: RunInput): Record<string, unknown> {
  const source: Record<string, string | string[]> | undefined = input[parameter.location]
  const data: Record<string, unknown> = {}
  if (!source) return data
  for (const { name, lookup, isArray, isBoolean } of parameter.properties) {
    if (!Object.hasOwn(source, lookup)) continue
    const value = source[lookup]
    if (value === undefined) continue
    const single = Array.isArray(value) && !isArray ? value[0] : value
    // ajv coerces only "true"/"false" to a boolean; `?verbose=1` is as common in URLs.
    data[name] = isBoolean && typeof single === 'string' ? (BOOLEAN_TEXT[single] ?? single) : single
  }
  return data
}

const BOOLEAN_TEXT: Record<string, string> = { '1': 'true', '0': 'false' }

function propertiesOf(schema: JsonSchema): Record<string, unknown> {
  const properties = schema.properties
  return isRecord(properties) ? properties : {}
}

function isArraySchema(schema: unknown): boolean {
  if (!isRecord(schema)) return false
  const type = schema.type
  return type === 'array' || (Array.isArray(type) && type.includes('array'))
}

function hasDefaultKeyword(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasDefaultKeyword)
  if (!isRecord(schema)) return false
  return Object.hasOwn(schema, 'default') || Object.values(schema).some(hasDefaultKeyword)
}
