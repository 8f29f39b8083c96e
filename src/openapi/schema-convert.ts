// JSON Schema as users write it -> the Schema Object dialect of OpenAPI 3.0.3.
// Only portable keywords survive; forms 3.0.3 lacks are translated (const, type arrays with null,
// numeric exclusive bounds); keys come out in one fixed order so exported documents diff cleanly.
import type { JsonSchema } from '../model/project.js'
import { isRecord } from '../internal/is-record.js'

const OPENAPI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object'])

/** The order keys are written in; anything not listed here is dropped. */
const KEY_ORDER = [
  'title',
  'type',
  'format',
  'nullable',
  'enum',
  'description',
  'default',
  'example',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'readOnly',
  'writeOnly',
  'deprecated',
] as const

type Key = (typeof KEY_ORDER)[number]

const STRING_KEYS: readonly Key[] = ['title', 'format', 'description', 'pattern']
const COUNT_KEYS: readonly Key[] = ['minLength', 'maxLength', 'minItems', 'maxItems']
const BOOLEAN_KEYS: readonly Key[] = ['uniqueItems', 'readOnly', 'writeOnly', 'deprecated', 'nullable']
const COMBINATOR_KEYS = ['oneOf', 'anyOf', 'allOf'] as const

/** Converts one user-written JSON Schema; local `$ref`s into `$defs`/`definitions` are inlined. */
export function toOpenApiSchema(schema: JsonSchema): JsonSchema {
  return convert(schema, schema, new Set())
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0
}

function convert(input: unknown, root: JsonSchema, refsInUse: Set<string>): JsonSchema {
  if (input === true || input === undefined) return {}
  if (input === false) return { not: {} }
  if (!isRecord(input)) return {}
  if (typeof input.$ref === 'string') return inlineRef(input.$ref, root, refsInUse)

  const out: Partial<Record<Key, unknown>> = {}
  const sub = (value: unknown) => convert(value, root, refsInUse)

  for (const key of STRING_KEYS) if (typeof input[key] === 'string') out[key] = input[key]
  for (const key of COUNT_KEYS) if (isCount(input[key])) out[key] = input[key]
  for (const key of BOOLEAN_KEYS) if (typeof input[key] === 'boolean') out[key] = input[key]
  if ('default' in input) out.default = structuredClone(input.default) // never share the project's values
  if ('example' in input) out.example = structuredClone(input.example)
  else if (Array.isArray(input.examples) && input.examples.length > 0) out.example = structuredClone(input.examples[0])
  if (typeof input.multipleOf === 'number' && input.multipleOf > 0) out.multipleOf = input.multipleOf

  const typeChoices = applyType(input.type, out)
  applyEnum(input, out)
  applyBound(input, out, 'minimum', 'exclusiveMinimum', (a, b) => a > b)
  applyBound(input, out, 'maximum', 'exclusiveMaximum', (a, b) => a < b)

  if (isRecord(input.properties)) {
    out.properties = Object.fromEntries(Object.entries(input.properties).map(([name, value]) => [name, sub(value)]))
  }
  if (Array.isArray(input.required)) {
    const names = [...new Set(input.required.filter((n): n is string => typeof n === 'string'))]
    if (names.length > 0) out.required = names
  }
  if (typeof input.additionalProperties === 'boolean') out.additionalProperties = input.additionalProperties
  else if (isRecord(input.additionalProperties)) out.additionalProperties = sub(input.additionalProperties)
  // An object of unknown keys: said explicitly, or client generators type it as an empty record.
  else if (out.type === 'object' && out.properties === undefined) out.additionalProperties = true

  // Tuple-form items has no 3.0.3 equivalent: any of the listed item schemas (each once) is the closest.
  if (Array.isArray(input.items)) out.items = tupleItems(input.items.map(sub))
  else if (input.items !== undefined) out.items = sub(input.items)
  else if (out.type === 'array') out.items = {} // 3.0.3 requires items beside type: array

  for (const key of COMBINATOR_KEYS) {
    const members = input[key]
    if (Array.isArray(members) && members.length > 0) out[key] = members.map(sub)
  }
  if (typeChoices) {
    // Several types: a oneOf of them, nested in allOf when the schema has its own oneOf.
    if (out.oneOf === undefined) out.oneOf = typeChoices
    else out.allOf = [{ oneOf: typeChoices }, ...((out.allOf as JsonSchema[] | undefined) ?? [])]
  }
  if (input.not !== undefined) out.not = sub(input.not)
  if (out.nullable !== undefined && out.type === undefined) placeNullable(out)

  return ordered(out)
}

/**
 * 3.0.3 gives `nullable` a meaning only beside `type` (Redocly: nullable-type-sibling). Without
 * one, the type is taken from the enum's other values (string for an enum of null alone); with
 * neither, `nullable` says nothing and is dropped.
 */
function placeNullable(out: Partial<Record<Key, unknown>>): void {
  const values = Array.isArray(out.enum) ? (out.enum as unknown[]).filter((v) => v !== null) : null
  if (!values) {
    delete out.nullable
    return
  }
  const types = new Set(values.map(jsonTypeOf))
  if (types.size === 0) out.type = 'string'
  else if (types.size === 1) out.type = [...types][0]
  else if (types.size === 2 && types.has('integer') && types.has('number')) out.type = 'number'
  else delete out.nullable // mixed types: no single type to stand beside
}

function jsonTypeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value === 'object' ? 'object' : typeof value
}

/**
 * `type` may be a string or an array; `null` in it becomes `nullable: true`. Returns the choices
 * when several non-null types remain (written as a oneOf by the caller).
 */
function applyType(type: unknown, out: Partial<Record<Key, unknown>>): JsonSchema[] | null {
  const types = (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === 'string')
  if (types.length === 0) return null
  let real = [...new Set(types.filter((t) => OPENAPI_TYPES.has(t)))]
  // number already covers integer; dropping it keeps the oneOf choices disjoint.
  if (real.includes('number')) real = real.filter((t) => t !== 'integer')
  const nullable = types.includes('null')
  if (real.length === 0) {
    // Only null is allowed; placeNullable gives it the type 3.0.3 wants beside nullable.
    if (nullable) Object.assign(out, { nullable: true, enum: [null] })
    return null
  }
  if (real.length === 1) {
    out.type = real[0]
    if (nullable) out.nullable = true
    return null
  }
  // 3.0.3 applies nullable only beside a type: it goes on exactly one choice, so null matches once.
  return real.map((t, i) => ordered({ type: t, nullable: nullable && i === 0 ? true : undefined, items: t === 'array' ? {} : undefined }))
}

function applyEnum(input: Record<string, unknown>, out: Partial<Record<Key, unknown>>): void {
  const values = 'const' in input ? [input.const] : Array.isArray(input.enum) ? input.enum : null
  if (!values || values.length === 0) return
  out.enum = structuredClone(values)
  if (values.includes(null)) out.nullable = true // 3.0.3: null is allowed only with nullable
}

/**
 * Draft-6+ numeric `exclusiveMinimum: n` becomes `minimum: n, exclusiveMinimum: true`. When both an
 * inclusive and an exclusive bound are given, the stricter one is kept.
 */
function applyBound(
  input: Record<string, unknown>,
  out: Partial<Record<Key, unknown>>,
  inclusiveKey: 'minimum' | 'maximum',
  exclusiveKey: 'exclusiveMinimum' | 'exclusiveMaximum',
  stricter: (a: number, b: number) => boolean,
): void {
  const inclusive = typeof input[inclusiveKey] === 'number' ? (input[inclusiveKey] as number) : undefined
  const exclusive = input[exclusiveKey]
  if (typeof exclusive === 'number' && (inclusive === undefined || !stricter(inclusive, exclusive))) {
    out[inclusiveKey] = exclusive
    out[exclusiveKey] = true
    return
  }
  if (inclusive === undefined) return
  out[inclusiveKey] = inclusive
  if (exclusive === true) out[exclusiveKey] = true // draft-4 style, already the 3.0.3 form
}

/** Inlines `#/$defs/x` and `#/definitions/x`; a cycle or an unknown target becomes `{}`. */
function inlineRef(ref: string, root: JsonSchema, refsInUse: Set<string>): JsonSchema {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)
  if (!match || refsInUse.has(ref)) return {}
  const defs = root[match[1]!]
  const name = decodeURIComponent(match[2]!).replace(/~1/g, '/').replace(/~0/g, '~')
  if (!isRecord(defs) || !(name in defs)) return {}
  refsInUse.add(ref)
  try {
    return convert(defs[name], root, refsInUse)
  } finally {
    refsInUse.delete(ref)
  }
}

/** `anyOf` of the distinct item schemas; one schema stands alone, none is `{}`. */
function tupleItems(items: JsonSchema[]): JsonSchema {
  const distinct = [...new Map(items.map((item) => [JSON.stringify(item), item])).values()]
  if (distinct.length === 0) return {}
  return distinct.length === 1 ? distinct[0]! : { anyOf: distinct }
}

function ordered(out: Partial<Record<Key, unknown>>): JsonSchema {
  const result: JsonSchema = {}
  for (const key of KEY_ORDER) if (out[key] !== undefined) result[key] = out[key]
  return result
}
