// Turns ajv errors into messages for the person who wrote the file: one per mistake, in their words,
// with the source path of the YAML node to point at.
import type { ErrorObject } from 'ajv'
import { didYouMean } from './suggest.js'

export interface SchemaIssue {
  /** Source path relative to the validated value. */
  path: (string | number)[]
  /** Point at the key of the last segment (an unknown setting) rather than its value. */
  key: boolean
  message: string
}

export interface DescribeOptions {
  /** What the validated value is, for messages about its top level: `an if node`, `flowctl.yaml`. */
  rootName: string
  /** Path segments shown in front of every dotted path: `['schedule', 'input']`. */
  prefix?: (string | number)[]
  /** Keys allowed at the top level besides the schema's own properties (a node's id, type, ...). */
  rootKeys?: string[]
}

const TYPE_NOUNS: Record<string, string> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'a mapping (key: value)',
  array: 'a list',
  null: 'empty',
}

function pointerSegments(pointer: string, data: unknown): (string | number)[] {
  const segments: (string | number)[] = []
  let value = data
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    const index = Array.isArray(value) ? Number(segment) : NaN
    segments.push(Number.isInteger(index) ? index : segment)
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[segment] : undefined
  }
  return segments
}

function dottedPath(path: readonly (string | number)[]): string {
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('')
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function discriminator(branch: unknown): [string, unknown] | null {
  const properties = (branch as { properties?: Record<string, { const?: unknown }> }).properties ?? {}
  for (const [name, schema] of Object.entries(properties)) if (schema && 'const' in schema) return [name, schema.const]
  return null
}

/** With `oneOf` (as in `auth`), ajv reports every branch; keep the branch the author chose by its
 *  discriminating constant (`type: bearer`), or say which constants are allowed. */
function pickOneOfBranches(errors: ErrorObject[]): { kept: ErrorObject[]; replaced: { error: ErrorObject; property: string; allowed: unknown[] }[] } {
  let kept = errors
  const replaced: { error: ErrorObject; property: string; allowed: unknown[] }[] = []
  for (const oneOf of errors.filter((e) => e.keyword === 'oneOf')) {
    const branches = Array.isArray(oneOf.schema) ? oneOf.schema : []
    const keys = branches.map(discriminator)
    const data = (oneOf.data ?? {}) as Record<string, unknown>
    const chosen = keys.findIndex((k) => k !== null && data[k[0]] === k[1])
    const prefix = `${oneOf.schemaPath}/`
    kept = kept.filter((e) => {
      if (e === oneOf) return false
      if (!e.schemaPath.startsWith(prefix) || !e.instancePath.startsWith(oneOf.instancePath)) return true
      return chosen >= 0 && e.schemaPath.startsWith(`${prefix}${chosen}/`)
    })
    const property = keys[0]?.[0]
    if (chosen < 0 && property !== undefined) replaced.push({ error: oneOf, property, allowed: keys.map((k) => k?.[1]) })
  }
  return { kept, replaced }
}

export function describeSchemaErrors(errors: readonly ErrorObject[], data: unknown, options: DescribeOptions): SchemaIssue[] {
  const prefix = options.prefix ?? []
  const where = (path: (string | number)[]) => (path.length === 0 && prefix.length === 0 ? options.rootName : dottedPath([...prefix, ...path]))
  const { kept, replaced } = pickOneOfBranches(errors.filter((e) => e.keyword !== 'if'))
  const issues: SchemaIssue[] = []
  for (const { error, property, allowed } of replaced) {
    const path = pointerSegments(error.instancePath, data)
    const value = (error.data as Record<string, unknown> | null)?.[property]
    issues.push(
      value === undefined
        ? { path, key: false, message: `${where(path)} needs "${property}" (one of: ${allowed.map(show).join(', ')})` }
        : {
            path: [...path, property],
            key: false,
            message: `${where([...path, property])} must be one of: ${allowed.map(show).join(', ')} (not "${show(value)}")${typeof value === 'string' ? didYouMean(value, allowed.map(show)) : ''}`,
          },
    )
  }
  for (const error of kept) {
    const path = pointerSegments(error.instancePath, data)
    const params = error.params as Record<string, unknown>
    const here = where(path)
    switch (error.keyword) {
      case 'additionalProperties': {
        const name = String(params.additionalProperty)
        const atRoot = path.length === 0 && prefix.length === 0
        const own = Object.keys((error.parentSchema?.properties ?? {}) as object)
        const allowed = [...(atRoot ? (options.rootKeys ?? []) : []), ...own]
        const hint = didYouMean(name, allowed)
        const message = atRoot ? `"${name}" is not a setting of ${options.rootName}${hint}` : `"${name}" is not allowed in ${here}${hint}`
        issues.push({ path: [...path, name], key: true, message: allowed.length ? `${message} (allowed: ${allowed.join(', ')})` : message })
        break
      }
      case 'required':
        issues.push({ path, key: false, message: `${here} needs "${String(params.missingProperty)}"` })
        break
      case 'type': {
        const nouns = String(params.type)
          .split(',')
          .map((t) => TYPE_NOUNS[t] ?? t)
        issues.push({ path, key: false, message: `${here} must be ${nouns.join(' or ')}` })
        break
      }
      case 'enum': {
        const values = (params.allowedValues as unknown[]).map(show)
        const hint = typeof error.data === 'string' ? didYouMean(error.data, values) : ''
        issues.push({ path, key: false, message: `${here} must be one of: ${values.join(', ')} (not "${show(error.data)}")${hint}` })
        break
      }
      case 'const':
        issues.push({ path, key: false, message: `${here} must be ${show(params.allowedValue)}` })
        break
      case 'maxProperties': {
        const keys = Object.keys((error.data ?? {}) as object)
        const alone = keys.find((k) => k === 'all' || k === 'any' || k === 'not')
        const message = alone ? `${here} with "${alone}" cannot have other keys (${keys.filter((k) => k !== alone).join(', ')})` : `${here} ${error.message}`
        issues.push({ path, key: false, message })
        break
      }
      case 'minLength':
        issues.push({
          path,
          key: false,
          message: params.limit === 1 ? `${here} must not be empty` : `${here} must be at least ${String(params.limit)} characters long`,
        })
        break
      case 'minItems':
        issues.push({ path, key: false, message: `${here} must have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}` })
        break
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        issues.push({ path, key: false, message: `${here} must be ${String(params.comparison)} ${String(params.limit)}` })
        break
      case 'format':
        issues.push({ path, key: false, message: `${here} must be a valid ${String(params.format)}` })
        break
      case 'pattern':
        issues.push({ path, key: false, message: `${here} must match the pattern ${String(params.pattern)}` })
        break
      default:
        issues.push({ path, key: false, message: `${here} ${error.message ?? 'is not valid'}` })
    }
  }
  const seen = new Set<string>()
  return issues.filter((issue) => {
    const id = `${issue.path.join('\u0000')}|${issue.message}`
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
}
