// The PostgreSQL store, for several `serve` instances behind a load balancer. Claims, cursor moves
// and leases are single statements whose WHERE clauses make them safe under concurrency; pg is
// imported lazily so SQLite-only users never load it.
import type { Pool, QueryResultRow } from 'pg'
import { FlowctlError } from '../errors.js'
import { escapeNul, jsonbSafe } from './postgres-text.js'
import type { FilterNode } from '../model/document-filter.js'
import { withId } from './documents.js'
import { HistoryCap } from './history-cap.js'
import { canonicalIso, newDocumentId, parseOutboxId } from './ids.js'
import { migratePostgres } from './migrations/postgres.js'
import { describeServer, hideNames, isConnectionError, namesInUrl, unavailableError } from './postgres-errors.js'
import { PG_SQL, TRIM_PLANNER_SETTINGS, listRunsQuery, pgDocumentRows, pgRunValues, pushDocumentColumns, type PgDocumentRow } from './postgres-sql.js'
import { toOutboxMessages, toRunRecord, type OutboxRow, type RunRow, type StoredRunRow } from './rows.js'
import {
  deletePostgresDocuments,
  findPostgresDocuments,
  listPostgresCollections,
  postgresIndexStatements,
  updatePostgresDocuments,
} from './postgres-documents.js'
import { PostgresGuards } from './postgres-guards.js'
import { PostgresWaits } from './postgres-waits.js'
import { parseRunDetails } from './run-details.js'
import type { AsyncRunCompletion, AsyncRunState, ClaimedAsyncRun, ClaimOptions, NewAsyncRun } from '../model/async-runs.js'
import { PostgresAsyncQueue, type PgAsyncFinish } from './postgres-async-runs.js'
import type {
  DocumentChange,
  DocumentIndexes,
  DocumentQuery,
  Heartbeat,
  OutboxMessage,
  RunDetailsText,
  RunDocument,
  RunQuery,
  RunRecord,
  Store,
  StoredRun,
} from '../model/store.js'
import { WriteBatcher } from './write-batch.js'

/** A run (its values, pgRunValues) with the documents it inserted, or documents alone, waiting for the next group commit. */
type PgWrite = { kind: 'run'; values: unknown[]; documents: PgDocumentRow[] | undefined } | { kind: 'documents'; documents: PgDocumentRow[] }

/** Group commits running at once; writes arriving meanwhile join the next one. */
const MAX_COMMITS_IN_FLIGHT = 2

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface PostgresStoreOptions {
  /** Schema of flowctl's tables (created when missing; the connection's search_path). Default: the server's (public). */
  schema?: string
  /** Move the tables an earlier flowctl made in `public` into `schema` (see migratePostgres). */
  adoptPublicTables?: boolean
  /** The URL comes from a secret: its role and database names are kept out of messages. */
  hideUrlNames?: boolean
}

/** A lost connection, or a database that is gone or refuses the login (dropped, or not created again yet). */
function isUnavailable(error: unknown): boolean {
  return isConnectionError(error) || /^(28|3D)/.test(String((error as { code?: unknown }).code))
}

/** PostgreSQL's codes for a missing table or schema: the database was dropped and created again. */
const MISSING_TABLES = new Set(['42P01', '3F000'])

export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const { schema } = options
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new FlowctlError('USAGE', `schema "${schema}" must be lower-case letters, digits and underscores`)
  }
  if (!URL.canParse(url)) throw new FlowctlError('USAGE', 'the database URL is not a valid postgres:// URL')
  const server = describeServer(url)
  const hidden = options.hideUrlNames ? namesInUrl(url) : []
  const pg = (await import('pg')).default
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    application_name: 'flowctl',
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  })
  // An idle connection dropped by the server (a restart, pg_terminate_backend) emits 'error';
  // unhandled, it would kill the process. The pool discards that client, and the next query opens
  // a new connection or fails with STORE_UNAVAILABLE, which is where it is reported.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))

  const migrate = async () => {
    const client = await pool.connect()
    try {
      await migratePostgres(client, schema, { adoptPublicTables: options.adoptPublicTables })
    } finally {
      client.release()
    }
  }
  try {
    await migrate()
  } catch (error) {
    await pool.end().catch(() => {})
    if (error instanceof FlowctlError) throw error
    if (isConnectionError(error) || /^(28|3D)/.test(String((error as { code?: unknown }).code))) throw unavailableError(error, server, hidden)
    throw new FlowctlError('STORE_UNAVAILABLE', `cannot prepare the PostgreSQL database at ${server}: ${hideNames((error as Error).message, hidden)}`)
  }
  return new PostgresStore(pool, server, hidden, migrate)
}

class PostgresStore implements Store {
  readonly kind = 'postgres' as const
  // The history cap (history-cap.ts); this dialect's part is the count and the trim statement.
  private readonly cap = new HistoryCap({
    countRuns: async (projectId) => Number((await this.query<{ n: string }>('flowctl_count_all_runs', PG_SQL.countAllRuns, [projectId])).rows[0]?.n ?? 0),
    deleteBelowBoundary: (projectId, keep) => this.trimStatement(projectId, keep),
  })
  private readonly writes = new WriteBatcher<PgWrite>((items) => this.commitWrites(items), MAX_COMMITS_IN_FLIGHT)
  private readonly asyncQueue = new PostgresAsyncQueue((name, text, values) => this.query(name, text, values))
  private readonly asyncEnqueues = new WriteBatcher<NewAsyncRun>(async (runs) => void (await this.asyncQueue.enqueue(runs)), MAX_COMMITS_IN_FLIGHT)
  private readonly asyncFinishes = new WriteBatcher<PgAsyncFinish>((items) => this.asyncQueue.finish(items), MAX_COMMITS_IN_FLIGHT)

  /** The running re-migration after the database was recreated, shared by the queries that found it. */
  private remigrating: Promise<void> | null = null

  constructor(
    private readonly pool: Pool,
    private readonly server: string,
    private readonly hidden: readonly string[],
    private readonly migrate: () => Promise<void>,
  ) {}

  /** One statement (one autocommit transaction) for every queued run and document. */
  private async commitWrites(items: PgWrite[]): Promise<Map<number, unknown> | undefined> {
    try {
      await this.query('flowctl_insert_batch', PG_SQL.insertBatch, batchValues(items))
      return undefined
    } catch (error) {
      if (items.length === 1 || (error instanceof FlowctlError && error.code === 'STORE_UNAVAILABLE')) throw error
    }
    // A row's own error (say, a duplicate id) failed the whole statement: write the rows one by
    // one, so only the callers whose rows fail get an error.
    const failures = new Map<number, unknown>()
    for (const [index, item] of items.entries()) {
      try {
        await this.query('flowctl_insert_batch', PG_SQL.insertBatch, batchValues([item]))
      } catch (error) {
        failures.set(index, error)
      }
    }
    return failures
  }

  /**
   * Deletes the project's runs below its `keep`-th newest, in a transaction of its own; false when
   * another instance held the project's trim lock (PG_SQL.trimRuns). Its boundary must
   * be read from the index, newest first (~cap entries). On a young table, before autoanalyze saw it
   * grow, the planner estimated ~150 rows and chose a bitmap scan of the whole project, dead rows
   * included, plus a sort: 21–65 ms per trim instead of ~3, which made the database the Run API's
   * bottleneck. So the trim's transaction turns sorts and bitmap scans off for itself.
   */
  private async trimStatement(projectId: string, keep: number): Promise<boolean> {
    const client = await this.pool.connect() // a failure is caught by HistoryCap, like any other
    try {
      await client.query(`BEGIN; ${TRIM_PLANNER_SETTINGS}`)
      const { rows } = await client.query<{ got: boolean }>({ name: 'flowctl_trim_runs', text: PG_SQL.trimRuns, values: [projectId, keep] })
      await client.query('COMMIT')
      return rows[0]?.got === true
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
  }

  /** Runs one statement, turning a lost connection into STORE_UNAVAILABLE. Named statements are prepared once per connection. */
  private async query<Row extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<{ rows: Row[]; rowCount: number }> {
    try {
      const result = await this.pool.query<Row>({ name, text, values })
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    } catch (error) {
      if (isUnavailable(error)) throw unavailableError(error, this.server, this.hidden)
      if (!MISSING_TABLES.has(String((error as { code?: unknown }).code))) throw error
    }
    // The tables are gone (the database was dropped and created again while serving): create them
    // again, once for all the queries that noticed, then try this one again.
    await this.remigrate()
    try {
      const result = await this.pool.query<Row>({ name, text, values })
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    } catch (error) {
      if (isUnavailable(error)) throw unavailableError(error, this.server, this.hidden)
      throw error
    }
  }

  private async remigrate(): Promise<void> {
    this.remigrating ??= this.migrate().finally(() => (this.remigrating = null))
    try {
      await this.remigrating
    } catch (error) {
      if (isConnectionError(error)) throw unavailableError(error, this.server, this.hidden)
      throw new FlowctlError(
        'STORE_UNAVAILABLE',
        `flowctl's tables are missing from the PostgreSQL database at ${this.server} and could not be created again: ${hideNames((error as Error).message, this.hidden)}`,
      )
    }
  }

  /** Group commit: resolves once the statement holding this run and its documents committed (and a due trim ran). */
  async recordRun(run: RunRecord, historyCap: number, details?: RunDetailsText, documents?: readonly RunDocument[]): Promise<void> {
    await this.writes.add({ kind: 'run', values: pgRunValues(run, details), documents: pgDocumentRows(run.projectId, documents) })
    await this.cap.noteRun(run.projectId, historyCap)
  }

  async insertRunDocuments(projectId: string, documents: readonly RunDocument[]): Promise<void> {
    const rows = pgDocumentRows(projectId, documents)
    if (rows) await this.writes.add({ kind: 'documents', documents: rows })
  }

  async enqueueAsyncRun(run: NewAsyncRun): Promise<void> {
    await this.asyncEnqueues.add({ ...run, receivedAt: canonicalIso(run.receivedAt, 'receivedAt') })
  }

  async claimAsyncRuns(projectId: string, options: ClaimOptions): Promise<ClaimedAsyncRun[]> {
    return this.asyncQueue.claim(projectId, options)
  }

  async renewAsyncClaims(tokens: string[], leaseMs: number): Promise<void> {
    await this.asyncQueue.renew(tokens, leaseMs)
  }

  /** Group commit: the record and the queue row's completion are one statement (postgres-async-runs.ts). */
  async finishAsyncRun(
    run: RunRecord,
    historyCap: number,
    details: RunDetailsText | undefined,
    completion: AsyncRunCompletion,
    documents?: readonly RunDocument[],
  ): Promise<void> {
    await this.asyncFinishes.add({ id: run.id, values: pgRunValues(run, details), completion, documents: pgDocumentRows(run.projectId, documents) })
    await this.cap.noteRun(run.projectId, historyCap)
  }

  async releaseAsyncRun(id: string, token: string): Promise<void> {
    await this.asyncQueue.release(id, token)
  }

  async getAsyncRun(projectId: string, id: string): Promise<AsyncRunState | null> {
    return this.asyncQueue.get(projectId, id)
  }

  async countQueuedAsyncRuns(projectId: string): Promise<number> {
    return this.asyncQueue.countQueued(projectId)
  }

  async listRuns(query: RunQuery): Promise<RunRecord[]> {
    const limit = Math.max(0, Math.floor(query.limit ?? 50))
    const after = query.after === undefined ? undefined : canonicalIso(query.after, 'after')
    const { name, text, values } = listRunsQuery(query.projectId, { flow: query.flow, status: query.status, replayOf: query.replayOf, after }, limit)
    const { rows } = await this.query<RunRow>(name, text, values)
    return rows.map(toRunRecord)
  }

  async getRun(projectId: string, id: string): Promise<StoredRun | null> {
    const { rows } = await this.query<StoredRunRow>('flowctl_get_run', PG_SQL.getRun, [projectId, id])
    const row = rows[0]
    return row ? { ...toRunRecord(row), ...parseRunDetails(row.input, row.trace) } : null
  }

  async countRuns(projectId: string, flows: string[] | null, after: string | null): Promise<{ success: number; error: number }> {
    const allFlows = flows === null || flows.includes('*')
    const { rows } = await this.query<{ status: string; n: string }>('flowctl_count_runs', PG_SQL.countRuns, [
      projectId,
      allFlows ? null : flows,
      after === null ? null : canonicalIso(after, 'after'),
    ])
    const counts = { success: 0, error: 0 }
    for (const row of rows) if (row.status === 'success' || row.status === 'error') counts[row.status] = Number(row.n)
    return counts
  }

  async insertDocument(projectId: string, collection: string, document: unknown, givenId?: string): Promise<string> {
    const id = givenId ?? newDocumentId()
    await this.writes.add({ kind: 'documents', documents: [{ id, projectId, collection, body: jsonbSafe(JSON.stringify(document ?? null)), keep: false }] })
    return id
  }

  async getDocument(projectId: string, collection: string, id: string): Promise<unknown | null> {
    const { rows } = await this.query<{ body: unknown }>('flowctl_get_document', PG_SQL.getDocument, [projectId, collection, id])
    return rows[0] ? withId(id, rows[0].body) : null
  }

  private readonly boundQuery = <Row extends QueryResultRow>(name: string, text: string, values: unknown[]) => this.query<Row>(name, text, values)
  readonly guards = new PostgresGuards(this.boundQuery)
  readonly waits = new PostgresWaits(this.boundQuery, (projectId, documents) => this.insertRunDocuments(projectId, documents))

  async findDocuments(projectId: string, collection: string, query: DocumentQuery): Promise<{ documents: unknown[]; count: number }> {
    return findPostgresDocuments(this.boundQuery, projectId, collection, query)
  }

  async updateDocuments(projectId: string, collection: string, filter: FilterNode, change: DocumentChange): Promise<{ matched: number; modified: number }> {
    return updatePostgresDocuments(this.boundQuery, projectId, collection, filter, change)
  }

  async deleteDocuments(projectId: string, collection: string, filter: FilterNode): Promise<number> {
    return deletePostgresDocuments(this.boundQuery, projectId, collection, filter)
  }

  async listCollections(projectId: string): Promise<{ collection: string; count: number }[]> {
    return listPostgresCollections(this.boundQuery, projectId)
  }

  async ensureIndexes(indexes: DocumentIndexes): Promise<void> {
    for (const text of postgresIndexStatements(indexes)) {
      try {
        await this.pool.query(text)
      } catch (error) {
        // Another instance created it at the same moment (IF NOT EXISTS is not race-free): it exists.
        const code = (error as { code?: unknown }).code
        if (code === '23505' || code === '42P07') continue
        if (isConnectionError(error)) throw unavailableError(error, this.server, this.hidden)
        throw error
      }
    }
  }

  async claimScheduleMinute(projectId: string, scheduleId: string, minute: string): Promise<boolean> {
    const at = canonicalIso(minute, 'minute')
    const { rowCount } = await this.query('flowctl_claim', PG_SQL.claim, [projectId, scheduleId, at])
    return rowCount === 1
  }

  async claimedMinutes(projectId: string, scheduleId: string, from: string, to: string): Promise<string[]> {
    const values = [projectId, scheduleId, canonicalIso(from, 'from'), canonicalIso(to, 'to')]
    const { rows } = await this.query<{ minute: Date }>('flowctl_claimed_minutes', PG_SQL.claimedMinutes, values)
    return rows.map((row) => row.minute.toISOString())
  }

  async saveHeartbeat(heartbeat: Heartbeat): Promise<void> {
    await this.query('flowctl_save_heartbeat', PG_SQL.saveHeartbeat, [
      heartbeat.projectId,
      canonicalIso(heartbeat.at, 'at'),
      jsonbSafe(JSON.stringify(heartbeat.summary)),
    ])
  }

  async getHeartbeat(projectId: string): Promise<Heartbeat | null> {
    const { rows } = await this.query<{ at: Date; summary: Record<string, unknown> }>('flowctl_get_heartbeat', PG_SQL.getHeartbeat, [projectId])
    return rows[0] ? { projectId, at: rows[0].at.toISOString(), summary: rows[0].summary } : null
  }

  async getCursor(projectId: string, key: string): Promise<string | null> {
    const { rows } = await this.query<{ value: string }>('flowctl_get_cursor', PG_SQL.getCursor, [projectId, key])
    return rows[0]?.value ?? null
  }

  async advanceCursor(
    projectId: string,
    key: string,
    expected: string | null,
    next: string,
    message: { channel: string; payload: Record<string, unknown> } | null,
  ): Promise<boolean> {
    const name = expected === null ? 'flowctl_cursor_first' : 'flowctl_cursor_move'
    const text = expected === null ? PG_SQL.cursorFirst : PG_SQL.cursorMove
    const { rows } = await this.query<{ moved: number }>(name, text, [
      projectId,
      key,
      next,
      expected,
      message ? message.channel : null,
      message ? jsonbSafe(JSON.stringify(message.payload)) : null,
    ])
    return rows[0]?.moved === 1
  }

  async leaseOutbox(projectId: string, leaseMs: number, now: Date): Promise<OutboxMessage[]> {
    const { rows } = await this.query<OutboxRow>('flowctl_lease', PG_SQL.lease, [projectId, new Date(now.getTime() + leaseMs), now])
    return toOutboxMessages(rows)
  }

  async markDelivered(id: string): Promise<void> {
    const rowId = parseOutboxId(id)
    if (rowId !== null) await this.query('flowctl_mark_delivered', PG_SQL.markDelivered, [String(rowId)])
  }

  async markFailed(id: string, error: string): Promise<void> {
    const rowId = parseOutboxId(id)
    if (rowId !== null) await this.query('flowctl_mark_failed', PG_SQL.markFailed, [String(rowId), escapeNul(error)])
  }

  async close(): Promise<void> {
    if (this.pool.ended) return
    await Promise.all([this.writes.drain(), this.asyncEnqueues.drain(), this.asyncFinishes.drain()])
    await this.cap.close()
    if (!this.pool.ended) await this.pool.end()
  }
}

/** The 21 parallel arrays of PG_SQL.insertBatch: 16 run columns, then 5 document columns. */
function batchValues(items: PgWrite[]): unknown[][] {
  const columns: unknown[][] = Array.from({ length: 21 }, () => [])
  for (const item of items) {
    if (item.kind === 'run') item.values.forEach((value, i) => columns[i]!.push(value))
    if (item.documents) pushDocumentColumns(columns, 16, item.documents)
  }
  return columns
}
