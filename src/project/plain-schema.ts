// A quick "certainly valid" check of a value against a simple user schema, so a load whose schedule
// input plainly fits the Start's body schema does not load and run ajv. It answers true only when
// ajv (INPUT_AJV_OPTIONS: defaults, no coercion) would accept the value; any keyword or value it
// does not know makes it answer false, and the caller then asks ajv (which also words the errors).
// measured: loading a project with one scheduled flow costs 1.5× the CPU without it (ajv is loaded),
// 10,000 scheduled flows 4.3× (ajv compiles each body schema); docs/performance.md.
import type { JsonSchema } from '../model/project.js'
import { isRecord } from '../internal/is-record.js'

/** Keywords understood here; annotations are ignored as ajv ignores them. */
const KNOWN = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'default',
  'description',
  'title',
  'examples',
  '$comment',
  'readOnly',
  'writeOnly',
])

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const isPrimitive = (value: unknown): value is string | number | boolean | null =>
  value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
const isCount = (value: unknown) => value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0)
const isLimit = (value: unknown) => value === undefined || (typeof value === 'number' && Number.isFinite(value))

function hasType(value: Json, type: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number'
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'null':
      return value === null
    case 'array':
      return Array.isArray(value)
    case 'object':
      return isRecord(value)
    default:
      return false
  }
}

/** Whether `value` (plain JSON, changed in place by defaults like ajv's useDefaults) certainly
 *  satisfies `schema`. False means "not sure", never "invalid". */
export function plainlySatisfies(schema: JsonSchema | boolean, value: unknown): boolean {
  if (schema === true) return true
  if (!isRecord(schema) || !isPlainJson(value)) return false
  return satisfies(schema, value)
}

function isPlainJson(value: unknown): value is Json {
  if (isPrimitive(value)) return true
  if (Array.isArray(value)) return value.every(isPlainJson)
  return isRecord(value) && Object.getPrototypeOf(value) === Object.prototype && Object.values(value).every(isPlainJson)
}

function satisfies(schema: Record<string, unknown>, value: Json): boolean {
  for (const key of Object.keys(schema)) if (!KNOWN.has(key)) return false
  const { type } = schema
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type]
    if (types.length === 0 || !types.some((t) => hasType(value, t))) return false
  }
  if (schema.enum !== undefined && !(Array.isArray(schema.enum) && schema.enum.every(isPrimitive) && (schema.enum as unknown[]).includes(value))) return false
  if (schema.const !== undefined && !(isPrimitive(schema.const) && schema.const === value)) return false
  if (![schema.minLength, schema.maxLength, schema.minItems, schema.maxItems].every(isCount)) return false
  if (![schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum].every(isLimit)) return false
  if (typeof value === 'string') {
    const length = [...value].length // code points, like ajv's ucs2length
    if (length < ((schema.minLength as number | undefined) ?? 0) || length > ((schema.maxLength as number | undefined) ?? Infinity)) return false
  }
  if (typeof value === 'number') {
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema as Record<string, number | undefined>
    if ((minimum !== undefined && value < minimum) || (maximum !== undefined && value > maximum)) return false
    if ((exclusiveMinimum !== undefined && value <= exclusiveMinimum) || (exclusiveMaximum !== undefined && value >= exclusiveMaximum)) return false
  }
  if (Array.isArray(value)) return arraySatisfies(schema, value)
  if (isRecord(value)) return objectSatisfies(schema, value)
  return objectKeywordsWellFormed(schema)
}

/** Object keywords on a non-object value are ignored by ajv, but only if they are well formed. */
function objectKeywordsWellFormed(schema: Record<string, unknown>): boolean {
  const { properties, required, additionalProperties } = schema
  return (
    (properties === undefined || isRecord(properties)) &&
    (required === undefined || (Array.isArray(required) && required.every((r) => typeof r === 'string'))) &&
    (additionalProperties === undefined || typeof additionalProperties === 'boolean' || isRecord(additionalProperties))
  )
}

function arraySatisfies(schema: Record<string, unknown>, value: Json[]): boolean {
  const { items, minItems, maxItems } = schema as { items?: unknown; minItems?: number; maxItems?: number }
  if (value.length < (minItems ?? 0) || value.length > (maxItems ?? Infinity)) return false
  if (items === undefined || items === true) return objectKeywordsWellFormed(schema)
  if (!isRecord(items)) return false // tuple form, or `false`
  return objectKeywordsWellFormed(schema) && value.every((item) => satisfies(items, item))
}

function objectSatisfies(schema: Record<string, unknown>, value: { [key: string]: Json }): boolean {
  if (!objectKeywordsWellFormed(schema)) return false
  const properties = (schema.properties ?? {}) as Record<string, unknown>
  for (const [name, sub] of Object.entries(properties)) {
    if (!isRecord(sub) && typeof sub !== 'boolean') return false
    const fallback = isRecord(sub) ? sub.default : undefined
    // ajv's useDefaults: a missing property gets a copy of its default before anything is checked.
    if (value[name] === undefined && fallback !== undefined) {
      if (!isPlainJson(fallback)) return false
      value[name] = structuredClone(fallback)
    }
  }
  for (const name of (schema.required ?? []) as string[]) if (!Object.hasOwn(value, name)) return false
  for (const [name, item] of Object.entries(value)) {
    const sub = Object.hasOwn(properties, name) ? properties[name] : schema.additionalProperties
    if (sub === undefined || sub === true) continue
    if (sub === false || !isRecord(sub) || !satisfies(sub, item)) return false
  }
  return true
}
