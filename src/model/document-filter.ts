// Document filters and sorts (SPEC §10): a MongoDB-style subset, read from the flow file's WRITTEN
// shape when the project loads. Operators only ever come from there: at run time `bindFilter` puts
// resolved values into the leaves, and a value is data whatever it holds (an object that looks like
// `{ "$ne": null }` is compared as that object). filter-sql.ts turns a bound filter into SQL.
import { isRecord } from '../internal/is-record.js'

export type FieldPath = readonly string[]
type CompareOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte'

/** A filter tree. `V` is a value as written (may hold templates) or, once bound, plain data. */
export type FilterNode<V = unknown> =
  | { kind: 'all'; items: FilterNode<V>[] }
  | { kind: 'any'; items: FilterNode<V>[] }
  | { kind: 'not'; item: FilterNode<V> }
  | { kind: 'compare'; path: FieldPath; op: Exclude<CompareOp, 'ne'>; value: V }
  | { kind: 'in'; path: FieldPath; value: V }
  | { kind: 'exists'; path: FieldPath; value: V }

export interface SortKey {
  path: FieldPath
  direction: 1 | -1
}

/** A problem in a written filter or sort; `path` is relative to the setting. */
export interface FilterProblem {
  path: (string | number)[]
  message: string
  /** Point at the key rather than its value. */
  key?: boolean
}

const FILTER_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$not'] as const
const LOGICAL_OPERATORS = ['$and', '$or', '$not'] as const
/** A `$in` list longer than this fails the node: it would become a statement with that many parameters. */
const MAX_IN_VALUES = 1000

// Letters, digits, `_` and `-` (any script); not all digits, which would read as an array position.
const SEGMENT = /^[\p{L}\p{N}_-]+$/u
const ALL_DIGITS = /^[0-9]+$/

type Raw = Record<string, unknown>

/** The segments of a dotted field path, or a message saying what is wrong with it. */
export function parseFieldPath(text: string): FieldPath | string {
  const segments = text.split('.')
  for (const segment of segments) {
    if (!SEGMENT.test(segment)) {
      return `"${text}" is not a field path: use names of letters, digits, "_" and "-", joined by dots (customer.id)`
    }
    if (ALL_DIGITS.test(segment)) return `"${text}": "${segment}" would be an array position, which filters do not support`
  }
  if (segments[0] === '_id' && segments.length > 1) return `"${text}": _id is the document's id and has no fields`
  return segments
}

const operatorList = (list: readonly string[]) => list.join(' ')

/** Reads a written filter. Problems are collected, never thrown; the tree is only usable without them. */
export function parseFilter(written: unknown): { filter: FilterNode; problems: FilterProblem[] } {
  const problems: FilterProblem[] = []
  const filter = isRecord(written) ? readDocument(written, [], problems) : { kind: 'all' as const, items: [] }
  if (!isRecord(written)) problems.push({ path: [], message: 'must be an object like { status: open }' })
  return { filter, problems }
}

function readDocument(raw: Raw, at: (string | number)[], problems: FilterProblem[]): FilterNode {
  const items: FilterNode[] = []
  for (const [key, value] of Object.entries(raw)) {
    const here = [...at, key]
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) {
        problems.push({ path: here, message: `${key} needs a list of one or more filters` })
        continue
      }
      const parts = value.map((item, index) => {
        if (isRecord(item)) return readDocument(item, [...here, index], problems)
        problems.push({ path: [...here, index], message: `each item of ${key} must be a filter object` })
        return { kind: 'all' as const, items: [] }
      })
      items.push({ kind: key === '$and' ? 'all' : 'any', items: parts })
    } else if (key === '$not') {
      if (!isRecord(value) || Object.keys(value).length === 0) problems.push({ path: here, message: '$not needs a filter object that is not empty' })
      else items.push({ kind: 'not', item: readDocument(value, here, problems) })
    } else if (key.startsWith('$')) {
      problems.push({
        path: here,
        key: true,
        message: `"${key}" is not a filter operator here; at the top of a filter use a field name or one of: ${operatorList(LOGICAL_OPERATORS)}`,
      })
    } else {
      const path = parseFieldPath(key)
      if (typeof path === 'string') problems.push({ path: here, key: true, message: path })
      else items.push(readField(path, value, here, problems))
    }
  }
  return items.length === 1 ? items[0]! : { kind: 'all', items }
}

/** `field: value` (equality) or `field: { $op: value, ... }`. */
function readField(path: FieldPath, value: unknown, at: (string | number)[], problems: FilterProblem[]): FilterNode {
  if (!isRecord(value)) return { kind: 'compare', path, op: 'eq', value }
  const keys = Object.keys(value)
  const operators = keys.filter((k) => k.startsWith('$'))
  if (operators.length === 0) return { kind: 'compare', path, op: 'eq', value } // an object compared whole
  if (operators.length !== keys.length) {
    problems.push({ path: at, message: `mixes operators (${operators.join(', ')}) with fields; write { $eq: { ... } } to compare with an object` })
    return { kind: 'all', items: [] }
  }
  const items: FilterNode[] = []
  for (const op of operators) {
    const operand = value[op]
    const here = [...at, op]
    switch (op) {
      case '$eq':
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        items.push({ kind: 'compare', path, op: op.slice(1) as Exclude<CompareOp, 'ne'>, value: operand })
        break
      case '$ne':
        items.push({ kind: 'not', item: { kind: 'compare', path, op: 'eq', value: operand } })
        break
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand) && !isWholeTemplate(operand)) {
          problems.push({ path: here, message: `${op} needs a list of values, or one {{ reference }} to a list` })
          break
        }
        const test: FilterNode = { kind: 'in', path, value: operand }
        items.push(op === '$in' ? test : { kind: 'not', item: test })
        break
      }
      case '$exists':
        if (typeof operand !== 'boolean' && !isWholeTemplate(operand)) problems.push({ path: here, message: '$exists must be true or false' })
        else items.push({ kind: 'exists', path, value: operand })
        break
      case '$not':
        if (!isRecord(operand) || Object.keys(operand).length === 0 || !Object.keys(operand).every((k) => k.startsWith('$'))) {
          problems.push({ path: here, message: '$not on a field needs operators, like { $not: { $gt: 5 } }' })
        } else {
          items.push({ kind: 'not', item: readField(path, operand, here, problems) })
        }
        break
      default:
        problems.push({ path: here, key: true, message: `"${op}" is not a filter operator; use one of: ${operatorList(FILTER_OPERATORS)}` })
    }
  }
  return items.length === 1 ? items[0]! : { kind: 'all', items }
}

function isWholeTemplate(value: unknown): boolean {
  return typeof value === 'string' && /^\s*\{\{.*\}\}\s*$/s.test(value)
}

/** Reads a written sort: `{ field: 1 | -1, ... }`, in the written key order. */
export function parseSort(written: unknown): { sort: SortKey[]; problems: FilterProblem[] } {
  const problems: FilterProblem[] = []
  const sort: SortKey[] = []
  if (!isRecord(written)) return { sort, problems: [{ path: [], message: 'must be an object like { createdAt: -1 }' }] }
  for (const [key, direction] of Object.entries(written)) {
    const path = parseFieldPath(key)
    if (typeof path === 'string') problems.push({ path: [key], key: true, message: path })
    else if (direction !== 1 && direction !== -1) problems.push({ path: [key], message: `sort direction of "${key}" must be 1 (ascending) or -1 (descending)` })
    else sort.push({ path, direction })
  }
  return { sort, problems }
}

/** Thrown when a bound value cannot be used where it is (a `$in` that is not a list); fails the node. */
export class FilterValueError extends Error {}

/** How `bindFilter` treats a value that resolves to null or nothing. */
export interface BindOptions {
  /**
   * `update` and `delete` (SPEC §19): fail with `filter value for <field> is missing` rather than match
   * the documents without that field. A `null` written as such in the flow file is the author's and is
   * kept (as is `$exists: false`). `find` and `get` compare with null, as before.
   */
  requireValues?: boolean
}

/**
 * Puts resolved values into a written filter's leaves. `resolve` is the node context's resolver:
 * whatever it returns is data. The tree's shape (operators, fields) never changes.
 */
export function bindFilter(filter: FilterNode, resolve: (value: unknown) => unknown, options: BindOptions = {}): FilterNode {
  switch (filter.kind) {
    case 'all':
    case 'any':
      return { kind: filter.kind, items: filter.items.map((item) => bindFilter(item, resolve, options)) }
    case 'not':
      return { kind: 'not', item: bindFilter(filter.item, resolve, options) }
    case 'compare': {
      const value = resolve(filter.value) ?? null
      if (options.requireValues && value === null && filter.value !== null) throw missingValue(filter.path)
      return { ...filter, value }
    }
    case 'in': {
      const values = resolve(filter.value)
      if (options.requireValues && (values === null || values === undefined)) throw missingValue(filter.path)
      if (!Array.isArray(values)) throw new FilterValueError(`filter on "${filter.path.join('.')}": $in/$nin needs a list, got ${describe(values)}`)
      if (values.length > MAX_IN_VALUES)
        throw new FilterValueError(`filter on "${filter.path.join('.')}": $in/$nin takes at most ${MAX_IN_VALUES} values, got ${values.length}`)
      if (options.requireValues && values.some((value, index) => (value ?? null) === null && !isWrittenNull(filter.value, index))) {
        throw missingValue(filter.path)
      }
      return { ...filter, value: values.map((v) => v ?? null) }
    }
    case 'exists': {
      const value = resolve(filter.value)
      if (typeof value !== 'boolean') throw new FilterValueError(`filter on "${filter.path.join('.')}": $exists needs true or false, got ${describe(value)}`)
      return { ...filter, value }
    }
  }
}

function missingValue(path: FieldPath): FilterValueError {
  return new FilterValueError(`filter value for ${path.join('.')} is missing`)
}

/** Whether item `index` of a written `$in` list is a `null` the author wrote (not a template). */
function isWrittenNull(written: unknown, index: number): boolean {
  return Array.isArray(written) && written[index] === null
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  return Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`
}

/** An equality on `_id`: how `get`, `update` and `delete` find a document by id. */
export function idFilter(id: unknown): FilterNode {
  return { kind: 'compare', path: ['_id'], op: 'eq', value: id }
}

/** True when a written filter holds at least one condition (update/delete refuse to touch everything). */
export function isEmptyFilter(written: unknown): boolean {
  return !isRecord(written) || Object.keys(written).length === 0
}
