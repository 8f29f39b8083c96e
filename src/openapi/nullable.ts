// Marks the End schema's properties whose bound value may be null at run time (SPEC §20), on the
// schema as written, before it is converted: `type: T` becomes `type: [T, null]` (3.0.3: `nullable`),
// so the conversion places `nullable` beside a type as for any user-written null.
import type { JsonSchema } from '../model/project.js'

/** A copy of `schema` in which the property at each path allows null; properties without a type are already open. */
export function withNullable(schema: JsonSchema, paths: readonly string[][]): JsonSchema {
  if (paths.length === 0) return schema
  const copy = structuredClone(schema)
  for (const path of paths) {
    const property = propertyAt(copy, path)
    if (property) allowNull(property)
  }
  return copy
}

function propertyAt(schema: JsonSchema, path: readonly string[]): JsonSchema | null {
  let current: JsonSchema = schema
  for (const name of path) {
    const properties = current.properties
    const next = properties && typeof properties === 'object' ? (properties as Record<string, unknown>)[name] : undefined
    if (!next || typeof next !== 'object' || Array.isArray(next)) return null
    current = next as JsonSchema
  }
  return current
}

function allowNull(property: JsonSchema): void {
  const { type } = property
  if (typeof type === 'string') property.type = type === 'null' ? type : [type, 'null']
  else if (Array.isArray(type) && !type.includes('null')) property.type = [...type, 'null']
  else return
  // An enum lists every allowed value: null must be one of them too.
  if (Array.isArray(property.enum) && !property.enum.includes(null)) property.enum = [...property.enum, null]
  if ('const' in property) {
    property.enum = [property.const, null]
    delete property.const
  }
}
