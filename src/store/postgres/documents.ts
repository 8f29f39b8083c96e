// Reading, querying and changing documents in PostgreSQL (SPEC §10): filters compile to jsonb SQL
// (filter-sql.ts). Statements are named by a hash of their text, so each distinct filter shape is
// prepared once per connection. An update is one statement: the matching rows are locked, merged
// with `(body - unset) || set`, and only rows whose content changes are written.
import { jsonbSafe } from './text.js'
import { createHash } from 'node:crypto'
import type { QueryResultRow } from 'pg'
import type { FilterNode } from '../../model/document-filter.js'
import { documentIndexName, withId } from '../documents.js'
import { compileFilter, compileSort, POSTGRES_DIALECT, postgresValue, SqlParams } from '../filter-sql.js'
import { newDocumentId } from '../../internal/ids.js'
import type { DocumentChange, DocumentIndexes, DocumentQuery, DocumentsPort, RunDocument } from '../../model/store.js'
import type { PgWriter } from './commit.js'
import type { PgConnection, PgQuery as Query } from './connection.js'
import { isConnectionError } from './errors.js'
import { PG_SQL, pgDocumentRows } from './sql.js'

/** The documents port: inserts join the group commit (commit.ts), the rest are single statements. */
export class PostgresDocuments implements DocumentsPort {
  constructor(
    private readonly connection: PgConnection,
    private readonly writer: PgWriter,
  ) {}

  async insert(projectId: string, collection: string, document: unknown, givenId?: string): Promise<string> {
    const id = givenId ?? newDocumentId()
    const body = jsonbSafe(JSON.stringify(document ?? null))
    await this.writer.writes.add({ kind: 'documents', documents: [{ id, projectId, collection, body, keep: false }] })
    return id
  }

  async insertRunDocuments(projectId: string, documents: readonly RunDocument[]): Promise<void> {
    const rows = pgDocumentRows(projectId, documents)
    if (rows) await this.writer.writes.add({ kind: 'documents', documents: rows })
  }

  async get(projectId: string, collection: string, id: string): Promise<unknown | null> {
    const { rows } = await this.connection.query<{ body: unknown }>('flowctl_get_document', PG_SQL.getDocument, [projectId, collection, id])
    return rows[0] ? withId(id, rows[0].body) : null
  }

  find(projectId: string, collection: string, query: DocumentQuery): Promise<{ documents: unknown[]; count: number }> {
    return findPostgresDocuments(this.connection.query, projectId, collection, query)
  }

  update(projectId: string, collection: string, filter: FilterNode, change: DocumentChange): Promise<{ matched: number; modified: number }> {
    return updatePostgresDocuments(this.connection.query, projectId, collection, filter, change)
  }

  delete(projectId: string, collection: string, filter: FilterNode): Promise<number> {
    return deletePostgresDocuments(this.connection.query, projectId, collection, filter)
  }

  listCollections(projectId: string): Promise<{ collection: string; count: number }[]> {
    return listPostgresCollections(this.connection.query, projectId)
  }

  async ensureIndexes(indexes: DocumentIndexes): Promise<void> {
    for (const text of postgresIndexStatements(indexes)) {
      try {
        await this.connection.pool.query(text)
      } catch (error) {
        // Another instance created it at the same moment (IF NOT EXISTS is not race-free): it exists.
        const code = (error as { code?: unknown }).code
        if (code === '23505' || code === '42P07') continue
        if (isConnectionError(error)) throw this.connection.unavailable(error)
        throw error
      }
    }
  }
}

const statementName = (text: string) => `flowctl_doc_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`

function where(projectId: string, collection: string, filter: FilterNode): { where: string; params: SqlParams } {
  const params = new SqlParams(POSTGRES_DIALECT, [projectId, collection])
  return { where: `project_id = $1 AND collection = $2 AND ${compileFilter(filter, params)}`, params }
}

async function run<Row extends QueryResultRow>(query: Query, text: string, values: unknown[]) {
  return query<Row>(statementName(text), text, values)
}

async function findPostgresDocuments(
  query: Query,
  projectId: string,
  collection: string,
  request: DocumentQuery,
): Promise<{ documents: unknown[]; count: number }> {
  const { where: condition, params } = where(projectId, collection, request.filter)
  const order = compileSort(request.sort ?? [], POSTGRES_DIALECT, request.newestFirst ? 'DESC' : 'ASC')
  const limit = params.add(Math.max(0, Math.floor(request.limit)))
  const skip = params.add(Math.max(0, Math.floor(request.skip ?? 0)))
  // count(*) OVER () is computed before LIMIT: every row of the page carries the count of all matches.
  const text = `SELECT id, body, count(*) OVER () AS total FROM documents WHERE ${condition} ORDER BY ${order} LIMIT ${limit} OFFSET ${skip}`
  const { rows } = await run<{ id: string; body: unknown; total: string }>(query, text, params.values)
  let count = Number(rows[0]?.total ?? 0)
  if (rows.length === 0 && ((request.skip ?? 0) > 0 || request.limit < 1)) {
    // An empty page (past the end, or limit 0) has no row to carry the count.
    const counted = await run<{ n: string }>(query, `SELECT count(*) AS n FROM documents WHERE ${condition}`, params.values.slice(0, -2))
    count = Number(counted.rows[0]?.n ?? 0)
  }
  return { documents: rows.map((row) => withId(row.id, row.body)), count }
}

async function updatePostgresDocuments(
  query: Query,
  projectId: string,
  collection: string,
  filter: FilterNode,
  change: DocumentChange,
): Promise<{ matched: number; modified: number }> {
  const { where: condition, params } = where(projectId, collection, filter)
  const { _id: _ignored, ...set } = change.set
  const unset = params.add(change.unset.filter((field) => field !== '_id'))
  const patch = params.add(jsonbSafe(JSON.stringify(set)))
  const text = `WITH matched AS (
      SELECT id, body, (body - ${unset}::text[]) || ${patch}::jsonb AS next FROM documents
      WHERE ${condition} AND jsonb_typeof(body) = 'object' FOR UPDATE
    ), changed AS (
      UPDATE documents AS d SET body = m.next FROM matched AS m WHERE d.id = m.id AND m.next IS DISTINCT FROM m.body RETURNING 1
    )
    SELECT (SELECT count(*) FROM matched) AS matched, (SELECT count(*) FROM changed) AS modified`
  const { rows } = await run<{ matched: string; modified: string }>(query, text, params.values)
  return { matched: Number(rows[0]?.matched ?? 0), modified: Number(rows[0]?.modified ?? 0) }
}

async function deletePostgresDocuments(query: Query, projectId: string, collection: string, filter: FilterNode): Promise<number> {
  const { where: condition, params } = where(projectId, collection, filter)
  const { rowCount } = await run(query, `DELETE FROM documents WHERE ${condition}`, params.values)
  return rowCount
}

async function listPostgresCollections(query: Query, projectId: string): Promise<{ collection: string; count: number }[]> {
  const { rows } = await run<{ collection: string; count: string }>(
    query,
    'SELECT collection, count(*) AS count FROM documents WHERE project_id = $1 GROUP BY collection ORDER BY collection COLLATE "C"',
    [projectId],
  )
  return rows.map((row) => ({ collection: row.collection, count: Number(row.count) }))
}

/** SQL creating the missing indexes; several instances may run it at once (errors of a lost race are ignored by the caller). */
function postgresIndexStatements(indexes: DocumentIndexes): string[] {
  const paths = new Map(
    Object.values(indexes)
      .flat()
      .map((path) => [documentIndexName(path), path]),
  )
  return [...paths].map(([name, path]) => `CREATE INDEX IF NOT EXISTS "${name}" ON documents (${postgresValue(path)}, project_id, collection)`)
}
