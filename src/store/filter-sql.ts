// The filter compiler: a bound filter (document-filter.ts) and a sort → a WHERE clause and an ORDER
// BY, for SQLite (JSON functions) or PostgreSQL (jsonb). Every value becomes a bound parameter; the
// SQL text comes from the filter as written plus the JSON type of each value (a number compares
// with numbers, a string with strings: no cross-type matching, as in MongoDB). Field paths are
// validated when read (letters, digits, `_`, `-`) and quoted here, so they cannot carry SQL either.
import { canonicalJson } from '../internal/canonical-json.js'
import type { FieldPath, FilterNode, SortKey } from '../model/document-filter.js'

/** Collects parameters and hands out the dialect's placeholder for each. */
export class SqlParams {
  readonly values: unknown[]
  constructor(
    readonly dialect: Dialect,
    initial: unknown[] = [],
  ) {
    this.values = [...initial]
  }
  add(value: unknown): string {
    this.values.push(value)
    return this.dialect.placeholder(this.values.length)
  }
}

export interface Dialect {
  name: 'sqlite' | 'postgres'
  placeholder(index: number): string
  true: string
  false: string
  /** SQL for one leaf comparison on a field (not `_id`). */
  compare(path: FieldPath, op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte', value: unknown, params: SqlParams): string
  exists(path: FieldPath, present: boolean): string
  /** ORDER BY terms for one sort key on a field (not `_id`). */
  sortTerms(path: FieldPath, direction: 'ASC' | 'DESC'): string[]
  /** The id column compared as text. */
  idColumn: string
  /** ORDER BY terms of insertion order, the order of documents no sort key tells apart. */
  insertionOrder(direction: 'ASC' | 'DESC'): string[]
}

const SQL_OPERATORS = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const

type JsonKind = 'null' | 'number' | 'string' | 'boolean' | 'object' | 'array' | 'other'

function kindOf(value: unknown): JsonKind {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'number') return Number.isFinite(value) ? 'number' : 'other'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'boolean'
  if (Array.isArray(value)) return 'array'
  return typeof value === 'object' ? 'object' : 'other'
}

// ---- SQLite: a quoted path literal ($."a"."b"). Equality compares the field's JSON text (`->`), which
// is typed by itself ("5" is not 5, true is not 1) and is what expression indexes hold; ranges and
// sorts use json_extract's SQL value guarded by json_type.

/** The JSON path literal of a field. */
function sqlitePath(path: FieldPath): string {
  return `'$${path.map((segment) => `."${segment}"`).join('')}'`
}
/** The field as JSON text; also used verbatim by expression indexes, which must match it. */
export const sqliteJson = (path: FieldPath) => `(body -> ${sqlitePath(path)})`
const sqliteValue = (path: FieldPath) => `json_extract(body, ${sqlitePath(path)})`
const sqliteType = (path: FieldPath) => `json_type(body, ${sqlitePath(path)})`

export const SQLITE_DIALECT: Dialect = {
  name: 'sqlite',
  // `+?`, not `?`. better-sqlite3's SQLite has STAT4: once a database has been ANALYZEd, it plans a
  // statement with the values bound to parameters compared against indexed columns, and so plans it
  // again every time they are bound anew (an indexed find cost ~3× its lookup, measured). Unary +
  // leaves a parameter's value and (no) affinity as they are, but the planner does not read through
  // it: a statement is planned once, from its text, as on a database never analyzed.
  placeholder: () => '+?',
  true: '1',
  false: '0',
  idColumn: 'id',
  // rowid: an index entry ends with it, so an equality on indexed fields needs no sort step.
  insertionOrder: (direction) => [`rowid ${direction}`],
  compare(path, op, value, params) {
    const field = sqliteValue(path)
    const type = sqliteType(path)
    const kind = kindOf(value)
    if (op === 'eq') {
      if (kind === 'null') return `coalesce(${sqliteJson(path)}, 'null') = 'null'`
      if (kind === 'other') return '0'
      // Documents are stored as JSON.stringify of their canonical form; the value is written the same way.
      return `${sqliteJson(path)} = ${params.add(JSON.stringify(canonicalJson(value)))}`
    }
    if (kind === 'number') return `(${field} ${SQL_OPERATORS[op]} ${params.add(value)} AND ${type} IN ('integer', 'real'))`
    if (kind === 'string') return `(${field} ${SQL_OPERATORS[op]} ${params.add(value)} AND ${type} = 'text')`
    return '0' // ranges compare numbers with numbers and strings with strings only
  },
  exists: (path, present) => `${sqliteJson(path)} IS ${present ? 'NOT ' : ''}NULL`,
  sortTerms(path, direction) {
    const type = sqliteType(path)
    // Type order as in MongoDB: missing/null, numbers, strings, objects, arrays, booleans.
    const rank = `CASE ${type} WHEN 'integer' THEN 1 WHEN 'real' THEN 1 WHEN 'text' THEN 2 WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'true' THEN 5 WHEN 'false' THEN 5 ELSE 0 END`
    const scalar = `CASE WHEN ${type} IN ('object', 'array') THEN NULL ELSE ${sqliteValue(path)} END`
    return [`${rank} ${direction}`, `${scalar} ${direction}`]
  },
}

// ---- PostgreSQL: body #> '{a,b}' (jsonb), compared as jsonb; strings in the "C" collation (code points).

function postgresPath(path: FieldPath): string {
  return `'{${path.map((segment) => `"${segment}"`).join(',')}}'`
}
export const postgresValue = (path: FieldPath) => `(body #> ${postgresPath(path)})`

export const POSTGRES_DIALECT: Dialect = {
  name: 'postgres',
  placeholder: (index) => `$${index}`,
  true: 'true',
  false: 'false',
  idColumn: 'id COLLATE "C"',
  // Commit time, then the id (time-ordered, with a per-process counter) within one commit.
  insertionOrder: (direction) => [`created_at ${direction}`, `id COLLATE "C" ${direction}`],
  compare(path, op, value, params) {
    const field = postgresValue(path)
    const kind = kindOf(value)
    if (op === 'eq') {
      if (kind === 'null') return `coalesce(${field}, 'null'::jsonb) = 'null'::jsonb`
      if (kind === 'other') return 'false'
      // jsonb equality is typed (5 is not "5", true is not 1) and ignores key order.
      return `${field} = ${params.add(JSON.stringify(value))}::jsonb`
    }
    if (kind === 'number') return `(jsonb_typeof(${field}) = 'number' AND ${field} ${SQL_OPERATORS[op]} ${params.add(JSON.stringify(value))}::jsonb)`
    if (kind === 'string') {
      return `(jsonb_typeof(${field}) = 'string' AND (body #>> ${postgresPath(path)}) COLLATE "C" ${SQL_OPERATORS[op]} ${params.add(value)}::text)`
    }
    return 'false'
  },
  exists: (path, present) => `${postgresValue(path)} IS ${present ? 'NOT ' : ''}NULL`,
  sortTerms(path, direction) {
    const field = postgresValue(path)
    const type = `jsonb_typeof(${field})`
    const rank = `CASE ${type} WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'boolean' THEN 5 ELSE 0 END`
    return [
      `${rank} ${direction}`,
      `CASE WHEN ${type} = 'number' THEN ${field}::numeric END ${direction}`,
      `CASE WHEN ${type} = 'string' THEN body #>> ${postgresPath(path)} END COLLATE "C" ${direction}`,
      `CASE WHEN ${type} = 'boolean' THEN ${field}::boolean END ${direction}`,
    ]
  },
}

const isId = (path: FieldPath) => path.length === 1 && path[0] === '_id'

/** `_id` is the id column: a string, always present. */
function compareId(op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte', value: unknown, dialect: Dialect, params: SqlParams): string {
  if (typeof value !== 'string') return dialect.false
  return `${dialect.idColumn} ${SQL_OPERATORS[op]} ${params.add(value)}`
}

/** The WHERE condition of a bound filter. */
export function compileFilter(filter: FilterNode, params: SqlParams): string {
  const { dialect } = params
  switch (filter.kind) {
    case 'all':
      return filter.items.length === 0 ? dialect.true : `(${filter.items.map((item) => compileFilter(item, params)).join(' AND ')})`
    case 'any':
      return filter.items.length === 0 ? dialect.false : `(${filter.items.map((item) => compileFilter(item, params)).join(' OR ')})`
    case 'not':
      // A missing field makes a comparison NULL; NOT NULL would drop the document, so NULL counts as false.
      return `NOT coalesce(${compileFilter(filter.item, params)}, ${dialect.false})`
    case 'compare':
      return isId(filter.path) ? compareId(filter.op, filter.value, dialect, params) : dialect.compare(filter.path, filter.op, filter.value, params)
    case 'exists':
      return isId(filter.path) ? (filter.value ? dialect.true : dialect.false) : dialect.exists(filter.path, filter.value === true)
    case 'in': {
      const values = filter.value as unknown[]
      if (values.length === 0) return dialect.false
      const tests = values.map((value) => compileFilter({ kind: 'compare', path: filter.path, op: 'eq', value }, params))
      return `(${tests.join(' OR ')})`
    }
  }
}

/** ORDER BY terms: the sort keys, then insertion order (in `tiebreak` direction) so pages are stable. */
export function compileSort(sort: readonly SortKey[], dialect: Dialect, tiebreak: 'ASC' | 'DESC'): string {
  const terms: string[] = []
  for (const key of sort) {
    const direction = key.direction === 1 ? 'ASC' : 'DESC'
    if (isId(key.path)) terms.push(`${dialect.idColumn} ${direction}`)
    else terms.push(...dialect.sortTerms(key.path, direction))
  }
  terms.push(...dialect.insertionOrder(tiebreak))
  return terms.join(', ')
}
