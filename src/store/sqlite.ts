// The embedded store: SQLite through better-sqlite3, in WAL mode so `serve`, a crontab `tick` and
// `history` can share one file. better-sqlite3 is synchronous; every write here is one short
// statement or one short IMMEDIATE transaction, and busy_timeout lets other processes wait their turn.
// Runs and documents are group-committed (sqlite-commit.ts) on the store's own connection.
import type Database from 'better-sqlite3'
import { dirname } from 'node:path'
import { FlowctlError } from '../errors.js'
import type { FilterNode } from '../model/document-filter.js'
import { withId } from './documents.js'
import { canonicalJson } from './filter-sql.js'
import { canonicalIso, newDocumentId, parseOutboxId } from './ids.js'
import { SQLITE_MIGRATIONS } from './migrations/sqlite.js'
import { unappliedMigrations } from './migrations/runner.js'
import { SqliteStatements } from './sqlite-statements.js'
import { runValues, toOutboxMessages, toRunRecord, type OutboxRow, type RunRow, type StoredRunRow } from './rows.js'
import { parseRunDetails } from './run-details.js'
import { sqliteBatchCommit, type SqliteDocumentRow, type SqliteWrite } from './sqlite-commit.js'
import { guarded, openSqliteConnection } from './sqlite-connection.js'
import { ensurePrivateFile, ensurePrivateFolder, PRIVATE_FILE_MODE, tighten } from './private-files.js'
import { SqliteDocuments } from './sqlite-documents.js'
import { SqliteGuards } from './sqlite-guards.js'
import { SqliteWaits } from './sqlite-waits.js'
import { AsyncClaimLost, type AsyncRunCompletion, type AsyncRunState, type ClaimedAsyncRun, type ClaimOptions, type NewAsyncRun } from '../model/async-runs.js'
import { SqliteAsyncQueue } from './sqlite-async-runs.js'
import { WriteBatcher } from './write-batch.js'
import { HistoryCap } from './history-cap.js'
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

export async function openSqliteStore(file: string): Promise<Store> {
  let db: Database.Database
  try {
    const onDisk = file !== ':memory:' && file !== ''
    if (onDisk) {
      ensurePrivateFolder(dirname(file))
      ensurePrivateFile(file)
    }
    db = openSqliteConnection(file)
    // SQLite makes -wal and -shm with the database's mode; older ones may still be wider.
    if (onDisk) for (const suffix of ['-wal', '-shm']) tighten(file + suffix, PRIVATE_FILE_MODE)
  } catch (error) {
    throw new FlowctlError('STORE_UNAVAILABLE', `cannot open the embedded database ${file}: ${(error as Error).message}`, { cause: error })
  }
  return storeOn(db, file)
}

let migratedImage: Buffer | undefined

/**
 * A new, private in-memory store, as `openSqliteStore(':memory:')` gives, copied (SQLite's
 * serialize/deserialize) from one migrated once per process: `flowctl test` opens one per case, and
 * running every migration each time cost it ~1 ms a case.
 */
export async function openFreshMemoryStore(): Promise<Store> {
  if (!migratedImage) {
    const template = openSqliteConnection(':memory:')
    try {
      migrate(template)
      migratedImage = template.serialize()
    } finally {
      template.close()
    }
  }
  return storeOn(openSqliteConnection(migratedImage), ':memory:')
}

async function storeOn(db: Database.Database, file: string): Promise<Store> {
  try {
    migrate(db)
    return new SqliteStore(db, new SqliteStatements(db))
  } catch (error) {
    db.close()
    throw new FlowctlError('STORE_UNAVAILABLE', `cannot prepare the embedded database ${file}: ${(error as Error).message}`, { cause: error })
  }
}

/** Applies pending migrations inside BEGIN IMMEDIATE, so processes opening at once apply each once. */
function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
  const apply = db.transaction(() => {
    const applied = (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => row.version)
    for (const migration of unappliedMigrations(SQLITE_MIGRATIONS, applied)) {
      db.exec(migration.sql)
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString())
    }
  })
  apply.immediate()
}

/** The body as SQLite stores it: keys in canonical order (whole-object filters compare text; reads match PostgreSQL's order). */
function documentBody(document: unknown): string {
  return JSON.stringify(canonicalJson(document ?? null))
}

/** A run's documents as rows of one commit (created now). */
function documentRows(projectId: string, documents: readonly RunDocument[]): SqliteDocumentRow[] {
  const createdAt = new Date().toISOString()
  return documents.map((doc) => [doc.id, projectId, doc.collection, documentBody(doc.document), createdAt, doc.keepExisting ? 1 : 0])
}

class SqliteStore implements Store {
  readonly kind = 'sqlite' as const
  private readonly writes: WriteBatcher<SqliteWrite>
  private readonly cap: HistoryCap
  private readonly documents: SqliteDocuments
  readonly guards: SqliteGuards
  readonly waits: SqliteWaits
  private readonly asyncQueue: SqliteAsyncQueue
  private readonly advance: (
    projectId: string,
    key: string,
    expected: string | null,
    next: string,
    message: { channel: string; payload: Record<string, unknown> } | null,
  ) => boolean

  constructor(
    private readonly db: Database.Database,
    private readonly sql: SqliteStatements,
  ) {
    const commit = sqliteBatchCommit(db, sql)
    this.writes = new WriteBatcher((items) => {
      // better-sqlite3 throws a TypeError on a closed connection: a write after close is an outage too.
      if (!db.open) throw new FlowctlError('STORE_UNAVAILABLE', 'the embedded database is closed')
      return guarded(() => commit(items))
    })
    // The history cap (history-cap.ts). A run is noted as soon as it is queued, so a trim it makes
    // due joins the same group commit right after it: no commit of its own, and one connection does
    // every hot-path write. SQLite's write lock keeps the trims of
    // several processes apart, so a trim never skips.
    this.cap = new HistoryCap({
      countRuns: async (projectId) => guarded(() => (sql.countAllRuns.get(projectId) as { n: number }).n),
      deleteBelowBoundary: async (projectId, keep) => {
        await this.writes.add({ kind: 'trim', projectId, keep })
        return true
      },
    })
    this.documents = new SqliteDocuments(db)
    this.guards = new SqliteGuards(db)
    this.waits = new SqliteWaits(db, (projectId, documents) => this.insertRunDocuments(projectId, documents))
    this.asyncQueue = new SqliteAsyncQueue(db)
    const cas = db.transaction(
      (projectId: string, key: string, expected: string | null, next: string, message: { channel: string; payload: Record<string, unknown> } | null) => {
        const current = (this.sql.getCursor.get(projectId, key) as { value: string } | undefined)?.value ?? null
        if (current !== expected) return false
        this.sql.setCursor.run(projectId, key, next)
        if (message) this.sql.enqueue.run(projectId, message.channel, JSON.stringify(message.payload), new Date().toISOString())
        return true
      },
    )
    // IMMEDIATE: the read and the write happen under one write lock, so two processes cannot both win.
    this.advance = (...args) => cas.immediate(...args)
  }

  /** Group commit: resolves once the transaction holding this run, its documents (and a trim it made due) committed. */
  async recordRun(run: RunRecord, historyCap: number, details?: RunDetailsText, documents?: readonly RunDocument[]): Promise<void> {
    const rows = documents && documents.length > 0 ? documentRows(run.projectId, documents) : undefined
    const written = this.writes.add({ kind: 'run', values: runValues(run, details), ...(rows ? { documents: rows } : {}) })
    const trimmed = this.cap.noteRun(run.projectId, historyCap) // never rejects
    await written
    if (trimmed) await trimmed
  }

  async insertRunDocuments(projectId: string, documents: readonly RunDocument[]): Promise<void> {
    if (documents.length > 0) await this.writes.add({ kind: 'run-documents', documents: documentRows(projectId, documents) })
  }

  async enqueueAsyncRun(run: NewAsyncRun): Promise<void> {
    const values = [run.id, run.projectId, run.flow, run.method, run.input, canonicalIso(run.receivedAt, 'receivedAt')] // ASYNC_QUEUE_COLUMNS order
    await this.writes.add({ kind: 'async-queued', values })
  }

  async claimAsyncRuns(projectId: string, options: ClaimOptions): Promise<ClaimedAsyncRun[]> {
    return guarded(() => this.asyncQueue.claimRuns(projectId, options))
  }

  async renewAsyncClaims(tokens: string[], leaseMs: number): Promise<void> {
    guarded(() => this.asyncQueue.renewClaims(tokens, Date.now() + leaseMs))
  }

  /** In the group commit, under a savepoint: the record and the queue row commit together or not at all. */
  async finishAsyncRun(
    run: RunRecord,
    historyCap: number,
    details: RunDetailsText | undefined,
    completion: AsyncRunCompletion,
    documents?: readonly RunDocument[],
  ): Promise<void> {
    const finish: [string, string, string, string, string] = [run.status, completion.response, new Date().toISOString(), run.id, completion.claimToken]
    const rows = documents && documents.length > 0 ? documentRows(run.projectId, documents) : undefined
    const written = this.writes.add({ kind: 'async-finished', values: runValues(run, details), finish, ...(rows ? { documents: rows } : {}) })
    const trimmed = this.cap.noteRun(run.projectId, historyCap) // never rejects; a lost claim counted is an early trim
    try {
      await written
    } catch (error) {
      // The run id is the record's primary key: a record already there means the run was recorded.
      if (String((error as { code?: unknown }).code).startsWith('SQLITE_CONSTRAINT')) throw new AsyncClaimLost(run.id)
      throw error
    }
    if (trimmed) await trimmed
  }

  async releaseAsyncRun(id: string, token: string): Promise<void> {
    guarded(() => this.asyncQueue.releaseRun(id, token))
  }

  async getAsyncRun(projectId: string, id: string): Promise<AsyncRunState | null> {
    return guarded(() => this.asyncQueue.getRun(projectId, id))
  }

  async countQueuedAsyncRuns(projectId: string): Promise<number> {
    return guarded(() => this.asyncQueue.countQueued(projectId))
  }

  async listRuns(query: RunQuery): Promise<RunRecord[]> {
    const limit = Math.max(0, Math.floor(query.limit ?? 50))
    const after = query.after === undefined ? undefined : canonicalIso(query.after, 'after')
    const { statement, params } = this.sql.listRuns(query.projectId, { flow: query.flow, status: query.status, replayOf: query.replayOf, after }, limit)
    return guarded(() => statement.all(params) as RunRow[]).map(toRunRecord)
  }

  async getRun(projectId: string, id: string): Promise<StoredRun | null> {
    const row = guarded(() => this.sql.getRun.get(projectId, id) as StoredRunRow | undefined)
    return row ? { ...toRunRecord(row), ...parseRunDetails(row.input, row.trace) } : null
  }

  async countRuns(projectId: string, flows: string[] | null, after: string | null): Promise<{ success: number; error: number }> {
    const allFlows = flows === null || flows.includes('*')
    const rows = guarded(
      () =>
        this.sql.countRuns.all({
          project_id: projectId,
          all_flows: allFlows ? 1 : 0,
          flows: JSON.stringify(allFlows ? [] : flows),
          after: after === null ? null : canonicalIso(after, 'after'),
        }) as { status: string; n: number }[],
    )
    const counts = { success: 0, error: 0 }
    for (const row of rows) if (row.status === 'success' || row.status === 'error') counts[row.status] = row.n
    return counts
  }

  async insertDocument(projectId: string, collection: string, document: unknown, givenId?: string): Promise<string> {
    const id = givenId ?? newDocumentId()
    const values = [id, projectId, collection, documentBody(document), new Date().toISOString()] // DOCUMENT_COLUMNS order
    await this.writes.add({ kind: 'document', values })
    return id
  }

  async getDocument(projectId: string, collection: string, id: string): Promise<unknown | null> {
    const row = guarded(() => this.sql.getDocument.get(projectId, collection, id) as { body: string } | undefined)
    return row ? withId(id, JSON.parse(row.body)) : null
  }

  async findDocuments(projectId: string, collection: string, query: DocumentQuery): Promise<{ documents: unknown[]; count: number }> {
    return this.documents.find(projectId, collection, query)
  }

  async updateDocuments(projectId: string, collection: string, filter: FilterNode, change: DocumentChange): Promise<{ matched: number; modified: number }> {
    return this.documents.update(projectId, collection, filter, change)
  }

  async deleteDocuments(projectId: string, collection: string, filter: FilterNode): Promise<number> {
    return this.documents.delete(projectId, collection, filter)
  }

  async listCollections(projectId: string): Promise<{ collection: string; count: number }[]> {
    return this.documents.collections(projectId)
  }

  async ensureIndexes(indexes: DocumentIndexes): Promise<void> {
    this.documents.ensureIndexes(indexes)
  }

  async claimScheduleMinute(projectId: string, scheduleId: string, minute: string): Promise<boolean> {
    const at = canonicalIso(minute, 'minute')
    return guarded(() => this.sql.claim.run(projectId, scheduleId, at, new Date().toISOString()).changes === 1)
  }

  async claimedMinutes(projectId: string, scheduleId: string, from: string, to: string): Promise<string[]> {
    const range = [canonicalIso(from, 'from'), canonicalIso(to, 'to')]
    return guarded(() => (this.sql.claimedMinutes.all(projectId, scheduleId, ...range) as { minute: string }[]).map((row) => row.minute))
  }

  async saveHeartbeat(heartbeat: Heartbeat): Promise<void> {
    const at = canonicalIso(heartbeat.at, 'at')
    guarded(() => this.sql.saveHeartbeat.run(heartbeat.projectId, at, JSON.stringify(heartbeat.summary)))
  }

  async getHeartbeat(projectId: string): Promise<Heartbeat | null> {
    const row = guarded(() => this.sql.getHeartbeat.get(projectId) as { at: string; summary: string } | undefined)
    return row ? { projectId, at: row.at, summary: JSON.parse(row.summary) as Record<string, unknown> } : null
  }

  async getCursor(projectId: string, key: string): Promise<string | null> {
    return guarded(() => this.sql.getCursor.get(projectId, key) as { value: string } | undefined)?.value ?? null
  }

  async advanceCursor(
    projectId: string,
    key: string,
    expected: string | null,
    next: string,
    message: { channel: string; payload: Record<string, unknown> } | null,
  ): Promise<boolean> {
    return guarded(() => this.advance(projectId, key, expected, next, message))
  }

  async leaseOutbox(projectId: string, leaseMs: number, now: Date): Promise<OutboxMessage[]> {
    const rows = guarded(() => this.sql.lease.all(now.getTime() + leaseMs, projectId, now.getTime()) as OutboxRow[])
    return toOutboxMessages(rows)
  }

  async markDelivered(id: string): Promise<void> {
    const rowId = parseOutboxId(id)
    if (rowId !== null) guarded(() => this.sql.markDelivered.run(new Date().toISOString(), rowId))
  }

  async markFailed(id: string, error: string): Promise<void> {
    const rowId = parseOutboxId(id)
    if (rowId !== null) guarded(() => this.sql.markFailed.run(error, rowId))
  }

  async close(): Promise<void> {
    if (!this.db.open) return
    // Writes already accepted are committed (or rejected) before the connection goes, trims first
    // (a trim is a write).
    await this.cap.close()
    await this.writes.drain()
    if (this.db.open) this.db.close()
  }
}
