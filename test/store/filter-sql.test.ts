// The filter compiler, table-driven on both dialects: what SQL each written filter becomes, that every
// value is a bound parameter, and the load problems of filters and sorts.
import { describe, expect, it } from 'vitest'
import { bindFilter, parseFieldPath, parseFilter, parseSort } from '../../src/model/document-filter.js'
import { canonicalJson } from '../../src/internal/canonical-json.js'
import { compileFilter, compileSort, POSTGRES_DIALECT, SQLITE_DIALECT, SqlParams } from '../../src/store/filter-sql.js'

const S = (p: string) => `json_extract(body, '$."${p}"')`
const T = (p: string) => `json_type(body, '$."${p}"')`
const A = (p: string) => `(body -> '$."${p}"')`
const P = (p: string) => `(body #> '{"${p}"}')`

function compile(written: Record<string, unknown>, dialect = SQLITE_DIALECT, values: Record<string, unknown> = {}) {
  const { filter, problems } = parseFilter(written)
  expect(problems).toEqual([])
  const params = new SqlParams(dialect)
  // A tiny resolver: "{{x}}" → values.x (the real one is tested in the store contract).
  const resolve = (value: unknown): unknown => (typeof value === 'string' && /^\{\{(\w+)\}\}$/.test(value) ? values[value.slice(2, -2)] : value)
  const sql = compileFilter(bindFilter(filter, resolve), params)
  return { sql, params: params.values }
}

/** [written filter, SQLite SQL, SQLite params, PostgreSQL SQL, PostgreSQL params]. */
const CASES: [Record<string, unknown>, string, unknown[], string, unknown[]][] = [
  [{}, '1', [], 'true', []],
  [{ status: 'open' }, `${A('status')} = +?`, ['"open"'], `${P('status')} = $1::jsonb`, ['"open"']],
  [{ qty: 5 }, `${A('qty')} = +?`, ['5'], `${P('qty')} = $1::jsonb`, ['5']],
  [{ ok: true }, `${A('ok')} = +?`, ['true'], `${P('ok')} = $1::jsonb`, ['true']],
  [{ note: null }, `coalesce(${A('note')}, 'null') = 'null'`, [], `coalesce(${P('note')}, 'null'::jsonb) = 'null'::jsonb`, []],
  [{ meta: { b: 1, a: 2 } }, `${A('meta')} = +?`, ['{"a":2,"b":1}'], `${P('meta')} = $1::jsonb`, ['{"b":1,"a":2}']],
  [
    { qty: { $gt: 5 } },
    `(${S('qty')} > +? AND ${T('qty')} IN ('integer', 'real'))`,
    [5],
    `(jsonb_typeof(${P('qty')}) = 'number' AND ${P('qty')} > $1::jsonb)`,
    ['5'],
  ],
  [
    { name: { $lte: 'm' } },
    `(${S('name')} <= +? AND ${T('name')} = 'text')`,
    ['m'],
    `(jsonb_typeof(${P('name')}) = 'string' AND (body #>> '{"name"}') COLLATE "C" <= $1::text)`,
    ['m'],
  ],
  [{ qty: { $gte: true } }, '0', [], 'false', []],
  [{ qty: { $ne: 5 } }, `NOT coalesce(${A('qty')} = +?, 0)`, ['5'], `NOT coalesce(${P('qty')} = $1::jsonb, false)`, ['5']],
  [{ a: { $exists: true } }, `${A('a')} IS NOT NULL`, [], `${P('a')} IS NOT NULL`, []],
  [{ a: { $exists: false } }, `${A('a')} IS NULL`, [], `${P('a')} IS NULL`, []],
  [{ a: { $in: [] } }, '0', [], 'false', []],
  [{ a: { $in: ['x', 1] } }, `(${A('a')} = +? OR ${A('a')} = +?)`, ['"x"', '1'], `(${P('a')} = $1::jsonb OR ${P('a')} = $2::jsonb)`, ['"x"', '1']],
  [{ a: { $nin: ['x'] } }, `NOT coalesce((${A('a')} = +?), 0)`, ['"x"'], `NOT coalesce((${P('a')} = $1::jsonb), false)`, ['"x"']],
  [{ 'customer.id': 'c1' }, `(body -> '$."customer"."id"') = +?`, ['"c1"'], `(body #> '{"customer","id"}') = $1::jsonb`, ['"c1"']],
  [{ _id: 'abc' }, 'id = +?', ['abc'], 'id COLLATE "C" = $1', ['abc']],
  [{ _id: 7 }, '0', [], 'false', []],
  [
    { $or: [{ a: 1 }, { b: { $exists: true } }] },
    `(${A('a')} = +? OR ${A('b')} IS NOT NULL)`,
    ['1'],
    `(${P('a')} = $1::jsonb OR ${P('b')} IS NOT NULL)`,
    ['1'],
  ],
  [{ $and: [{ a: 1 }], b: { $exists: false } }, `((${A('a')} = +?) AND ${A('b')} IS NULL)`, ['1'], `((${P('a')} = $1::jsonb) AND ${P('b')} IS NULL)`, ['1']],
  [{ $not: { a: { $exists: true } } }, `NOT coalesce(${A('a')} IS NOT NULL, 0)`, [], `NOT coalesce(${P('a')} IS NOT NULL, false)`, []],
]

describe('compileFilter', () => {
  it.each(CASES)('%j', (written, sqliteSql, sqliteParams, pgSql, pgParams) => {
    expect(compile(written)).toEqual({ sql: sqliteSql, params: sqliteParams })
    expect(compile(written, POSTGRES_DIALECT)).toEqual({ sql: pgSql, params: pgParams })
  })

  /** Hostile values reach the leaves through a reference; the SQL keeps its written shape and only parameters change. */
  const HOSTILE: unknown[] = [
    { $ne: null },
    "' OR 1=1 --",
    { $where: 'sleep(1)' },
    ['x', { $gt: '' }],
    '"); DROP TABLE documents; --',
    { status: { $exists: true } },
  ]
  it.each(HOSTILE)('a referenced value stays one parameter on both dialects: %j', (value) => {
    for (const dialect of [SQLITE_DIALECT, POSTGRES_DIALECT]) {
      const { sql, params } = compile({ status: '{{x}}' }, dialect, { x: value })
      expect(sql).not.toContain('DROP')
      expect(sql).not.toContain('OR 1=1')
      expect(sql).not.toContain('$where')
      // The whole value is one parameter, compared as data: a string as that string, an object as that object.
      expect(params).toEqual([dialect === POSTGRES_DIALECT ? JSON.stringify(value) : JSON.stringify(canonicalJson(value))])
    }
  })

  it('fails a $in whose reference is not a list, and an $exists that is not true/false', () => {
    expect(() => compile({ a: { $in: '{{x}}' } }, SQLITE_DIALECT, { x: { $ne: null } })).toThrow('$in/$nin needs a list, got an object')
    expect(() => compile({ a: { $exists: '{{x}}' } }, SQLITE_DIALECT, { x: 'yes' })).toThrow('$exists needs true or false')
    expect(() => compile({ a: { $in: '{{x}}' } }, SQLITE_DIALECT, { x: Array.from({ length: 1001 }, (_, i) => i) })).toThrow('at most 1000 values')
  })
})

describe('compileSort', () => {
  it('sorts by type rank, then value, then creation time and id', () => {
    const { sort } = parseSort({ qty: -1, _id: 1 })
    expect(compileSort(sort, SQLITE_DIALECT, 'ASC')).toBe(
      `CASE ${T('qty')} WHEN 'integer' THEN 1 WHEN 'real' THEN 1 WHEN 'text' THEN 2 WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'true' THEN 5 WHEN 'false' THEN 5 ELSE 0 END DESC, ` +
        `CASE WHEN ${T('qty')} IN ('object', 'array') THEN NULL ELSE ${S('qty')} END DESC, id ASC, rowid ASC`,
    )
    expect(compileSort([], POSTGRES_DIALECT, 'DESC')).toBe('created_at DESC, id COLLATE "C" DESC')
  })
})

describe('parseFilter and parseSort problems', () => {
  const PROBLEMS: [unknown, { path: (string | number)[]; message: string; key?: boolean }[]][] = [
    [
      { qty: { $regex: 'x' } },
      [{ path: ['qty', '$regex'], key: true, message: '"$regex" is not a filter operator; use one of: $eq $ne $gt $gte $lt $lte $in $nin $exists $not' }],
    ],
    [
      { $where: 'x' },
      [{ path: ['$where'], key: true, message: '"$where" is not a filter operator here; at the top of a filter use a field name or one of: $and $or $not' }],
    ],
    [{ $or: [] }, [{ path: ['$or'], message: '$or needs a list of one or more filters' }]],
    [{ $and: ['x'] }, [{ path: ['$and', 0], message: 'each item of $and must be a filter object' }]],
    [{ a: { $gt: 1, b: 2 } }, [{ path: ['a'], message: 'mixes operators ($gt) with fields; write { $eq: { ... } } to compare with an object' }]],
    [{ a: { $in: 'x' } }, [{ path: ['a', '$in'], message: '$in needs a list of values, or one {{ reference }} to a list' }]],
    [{ a: { $exists: 'yes' } }, [{ path: ['a', '$exists'], message: '$exists must be true or false' }]],
    [{ a: { $not: 5 } }, [{ path: ['a', '$not'], message: '$not on a field needs operators, like { $not: { $gt: 5 } }' }]],
    [
      { "a'b": 1 },
      [{ path: ["a'b"], key: true, message: `"a'b" is not a field path: use names of letters, digits, "_" and "-", joined by dots (customer.id)` }],
    ],
    [{ '{{start.f}}': 1 }, [{ path: ['{{start.f}}'], key: true, message: expect.stringContaining('is not a field path') as unknown as string }]],
    [{ 'items.0': 1 }, [{ path: ['items.0'], key: true, message: '"items.0": "0" would be an array position, which filters do not support' }]],
    [{ '_id.x': 1 }, [{ path: ['_id.x'], key: true, message: '"_id.x": _id is the document\'s id and has no fields' }]],
    ['x', [{ path: [], message: 'must be an object like { status: open }' }]],
  ]
  it.each(PROBLEMS)('%j', (written, problems) => {
    expect(parseFilter(written).problems).toEqual(problems)
  })

  it('reads sorts in written order and rejects bad directions', () => {
    expect(parseSort({ b: -1, 'a.c': 1 }).sort).toEqual([
      { path: ['b'], direction: -1 },
      { path: ['a', 'c'], direction: 1 },
    ])
    expect(parseSort({ a: 2 }).problems).toEqual([{ path: ['a'], message: 'sort direction of "a" must be 1 (ascending) or -1 (descending)' }])
  })

  it('accepts letters of any script in field paths', () => {
    expect(parseFieldPath('größe.wert')).toEqual(['größe', 'wert'])
  })
})
