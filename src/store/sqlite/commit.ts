// One group commit of the SQLite hot-path writes (runs with the documents they inserted): every
// write of a batch in one BEGIN IMMEDIATE ... COMMIT, on the store's connection. The history cap's
// trims (history-cap.ts decides when) ride in it too, so a trim costs no commit of its own.
import type Database from 'better-sqlite3'
import { FlowctlError } from '../../errors.js'
import { AsyncClaimLost } from '../../model/async-runs.js'
import type { RunDocument } from '../../model/store.js'
import { canonicalJson } from '../../internal/canonical-json.js'
import { isoTime } from '../../internal/iso-time.js'
import { HistoryCap } from '../history-cap.js'
import { RecordedListeners } from '../recorded.js'
import { guarded, isUnavailable } from './connection.js'
import type { SqliteStatements } from './statements.js'
import { WriteBatcher, type CommitResult } from '../write-batch.js'

/**
 * What the ports that write runs and documents share (history, documents, queue): the group commit,
 * the history cap and the listeners told after each committed record.
 */
export class SqliteWriter {
  readonly writes: WriteBatcher<SqliteWrite>
  readonly cap: HistoryCap
  readonly recorded = new RecordedListeners()

  constructor(db: Database.Database, sql: SqliteStatements) {
    const commit = sqliteBatchCommit(db, sql)
    this.writes = new WriteBatcher((items) => {
      // better-sqlite3 throws a TypeError on a closed connection: a write after close is an outage too.
      if (!db.open) throw new FlowctlError('STORE_UNAVAILABLE', 'the embedded database is closed')
      return guarded(() => commit(items))
    })
    // The history cap (history-cap.ts). A run is noted as soon as it is queued, so a trim it makes
    // due joins the same group commit right after it: no commit of its own, and one connection does
    // every hot-path write. SQLite's write lock keeps the trims of several processes apart, so a
    // trim never skips.
    this.cap = new HistoryCap({
      countRuns: async (projectId) => guarded(() => (sql.countAllRuns.get(projectId) as { n: number }).n),
      deleteBelowBoundary: async (projectId, keep) => {
        await this.writes.add({ kind: 'trim', projectId, keep })
        return true
      },
    })
  }

  /** Writes already accepted are committed (or rejected), trims first (a trim is a write). */
  async close(): Promise<void> {
    await this.cap.close()
    await this.writes.drain()
  }
}

/** The body as SQLite stores it: keys in canonical order (whole-object filters compare text; reads match PostgreSQL's order). */
export function documentBody(document: unknown): string {
  return JSON.stringify(canonicalJson(document ?? null))
}

/** A run's documents as rows of one commit (created now); undefined for none. */
export function documentRows(projectId: string, documents: readonly RunDocument[] | undefined): SqliteDocumentRow[] | undefined {
  if (!documents || documents.length === 0) return undefined
  const createdAt = isoTime(Date.now())
  return documents.map((doc) => [doc.id, projectId, doc.collection, documentBody(doc.document), createdAt, doc.keepExisting ? 1 : 0])
}

/**
 * A run's document: its values in `DOCUMENT_COLUMNS` order, then 1 to keep a document already
 * stored under its id (RunDocument.keepExisting), else 0.
 */
export type SqliteDocumentRow = unknown[]

/** Values in column order (`RUN_COLUMNS`, `DOCUMENT_COLUMNS`), as the statements take them. */
export type SqliteWrite =
  // A run's record, with the documents the run inserted (one commit per run).
  | { kind: 'run'; values: unknown[]; documents?: SqliteDocumentRow[] }
  | { kind: 'document'; values: unknown[] }
  // A run's documents ahead of its record (a later node of the run reads documents).
  | { kind: 'run-documents'; documents: SqliteDocumentRow[] }
  // Async runs (sqlite/queue.ts): a queued run (ASYNC_QUEUE_COLUMNS order), and a finished one:
  // its record (as `run`) with its queue row's [status, response, finishedAt, id, claimToken].
  | { kind: 'async-queued'; values: unknown[] }
  | {
      kind: 'async-finished'
      values: unknown[]
      finish: [string, string, string, string, string]
      documents?: SqliteDocumentRow[]
    }
  // The history cap's trim: the project's runs below its `keep`-th newest. One statement, so a
  // failing trim undoes itself alone and fails only its own item, no run.
  | { kind: 'trim'; projectId: string; keep: number }

/** Column order of an enqueued row (the values of a `async-queued` write). */
const ASYNC_QUEUE_COLUMNS = 'id, project_id, flow, method, input, received_at'

/** The async queue's statements of the group commit (the rest of the queue is sqlite/queue.ts). */
class SqliteAsyncWrites {
  private readonly enqueue: Database.Statement
  private readonly finish: Database.Statement

  constructor(db: Database.Database) {
    this.enqueue = db.prepare(`INSERT INTO async_runs (${ASYNC_QUEUE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`)
    this.finish = db.prepare(`UPDATE async_runs
      SET status = ?, response = ?, finished_at = ?, input = NULL, claim_token = NULL, lease_until = NULL
      WHERE id = ? AND claim_token = ? AND status = 'running'`)
  }

  queue(values: unknown[]): void {
    this.enqueue.run(...values)
  }

  /** Marks the row finished; throws AsyncClaimLost when it is not claimed with this token. Call inside a savepoint. */
  finished(values: [status: string, response: string, finishedAt: string, id: string, token: string]): void {
    if (this.finish.run(...values).changes !== 1) throw new AsyncClaimLost(values[3])
  }
}

/**
 * The commit function for `WriteBatcher`: writes the batch in one transaction and reports each
 * row's own error (a duplicate id) by index. Throws (the raw SQLite error) when the transaction
 * failed as a whole, in which case nothing of the batch was written.
 */
function sqliteBatchCommit(db: Database.Database, sql: SqliteStatements): (items: SqliteWrite[]) => CommitResult {
  const asyncWrites = new SqliteAsyncWrites(db)
  const insertDocuments = (rows: SqliteDocumentRow[]) => {
    for (const row of rows) (row[5] ? sql.insertDocumentIfAbsent : sql.insertDocument).run(row[0], row[1], row[2], row[3], row[4])
  }
  // A run's writes go in together or not at all. A savepoint per run cost ~25% more CPU per commit
  // (measured: 34 against 27 µs a run, batches of 50), so a batch is first written without them; if
  // a run's row fails (a duplicate id), the batch is rolled back and written again with a savepoint
  // per run, so that run alone fails. A lost claim can happen any time, so async finishes always
  // use one.
  const runWithDocuments = (values: unknown[], documents: SqliteDocumentRow[]) => {
    insertDocuments(documents)
    sql.insertRun.run(...values)
  }
  const runWithDocumentsAlone = db.transaction(runWithDocuments)
  const documentsAlone = db.transaction(insertDocuments)
  const finishAsync = db.transaction((item: Extract<SqliteWrite, { kind: 'async-finished' }>) => {
    asyncWrites.finished(item.finish)
    if (item.documents) insertDocuments(item.documents)
    sql.insertRun.run(...item.values)
  })

  const commitBatch = db.transaction((items: SqliteWrite[], failures: Map<number, unknown>, savepoints: boolean) => {
    items.forEach((item, index) => {
      try {
        if (item.kind === 'run') {
          if (!item.documents) sql.insertRun.run(...item.values)
          else (savepoints ? runWithDocumentsAlone : runWithDocuments)(item.values, item.documents)
        } else if (item.kind === 'document') sql.insertDocument.run(...item.values)
        else if (item.kind === 'run-documents') (savepoints ? documentsAlone : insertDocuments)(item.documents)
        else if (item.kind === 'async-queued') asyncWrites.queue(item.values)
        else if (item.kind === 'trim') sql.trimRuns.run(item.projectId, item.projectId, item.keep)
        else finishAsync(item)
      } catch (error) {
        // One row's own error (say, a duplicate id) fails only its caller; anything that ended
        // the transaction fails the batch.
        if (isUnavailable(error) || !db.inTransaction) throw error
        // Part of a run's rows may be written: start again, with a savepoint per run.
        if (!savepoints && isSeveralRows(item)) throw new WithSavepoints()
        failures.set(index, error)
        return
      }
    })
  })

  return (items) => {
    const failures = new Map<number, unknown>()
    try {
      commitBatch.immediate(items, failures, false)
    } catch (error) {
      if (!(error instanceof WithSavepoints)) throw error
      failures.clear()
      commitBatch.immediate(items, failures, true)
    }
    return failures.size > 0 ? failures : undefined
  }
}

/** Rolls a batch back to be written again with a savepoint per run (see runWithDocuments). */
class WithSavepoints extends Error {}

/** Writes that are more than one statement (async finishes have their own savepoint). */
function isSeveralRows(item: SqliteWrite): boolean {
  return (item.kind === 'run' && item.documents !== undefined) || item.kind === 'run-documents'
}
