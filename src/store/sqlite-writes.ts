// The SQLite hot-path writes (runs and documents) with group commit: everything queued in one
// event-loop turn is one BEGIN IMMEDIATE ... COMMIT, and the history trim of each project that
// passed its cap rides in the same transaction under a savepoint, so a failed trim rolls back alone
// and never fails the writes. SQLite is synchronous, so trims of one process never overlap.
import type Database from 'better-sqlite3'
import { HistoryCounter, isCapped } from './history-cap.js'
import type { SqliteStatements } from './sqlite-statements.js'
import { WriteBatcher, type CommitResult } from './write-batch.js'

export type SqliteWrite =
  | { kind: 'run'; projectId: string; cap: number; row: Record<string, unknown> }
  | { kind: 'document'; values: unknown[] }

export class SqliteWrites {
  private readonly history = new HistoryCounter()
  private readonly batcher: WriteBatcher<SqliteWrite>
  private readonly commitBatch: Database.Transaction<(items: SqliteWrite[], failures: Map<number, unknown>) => void>
  private readonly noteRuns: (projectId: string, inserted: number, cap: number) => void

  /** `isUnavailable` tells errors that doom the whole transaction (busy, I/O, full disk) from one row's own error. */
  constructor(
    private readonly db: Database.Database,
    private readonly sql: SqliteStatements,
    isUnavailable: (error: unknown) => boolean,
    guard: <R>(action: () => R) => R,
  ) {
    // Under a savepoint, and only when there is SQL to run: the first count of a project, or a trim.
    const countAndTrim = db.transaction((projectId: string, cap: number) => {
      // The first time, count in this transaction: the count includes this batch's rows.
      if (this.history.get(projectId) === undefined) this.history.set(projectId, (sql.countAllRuns.get(projectId) as { n: number }).n)
      if (this.history.isDue(projectId, cap)) {
        sql.trimRuns.run(projectId, Math.floor(cap))
        // We hold the write lock: the project now holds exactly `cap` runs.
        this.history.set(projectId, Math.floor(cap))
      }
    })
    this.noteRuns = (projectId: string, inserted: number, cap: number) => {
      const known = this.history.get(projectId)
      if (known !== undefined) {
        this.history.set(projectId, known + inserted)
        if (!this.history.isDue(projectId, cap)) return
      }
      countAndTrim(projectId, cap)
    }
    this.commitBatch = db.transaction((items: SqliteWrite[], failures: Map<number, unknown>) => {
      const runsByProject = new Map<string, { inserted: number; cap: number }>()
      items.forEach((item, index) => {
        try {
          if (item.kind === 'run') sql.insertRun.run(item.row)
          else sql.insertDocument.run(...item.values)
        } catch (error) {
          // One row's own error (say, a duplicate id) fails only its caller; anything that ended
          // the transaction fails the batch.
          if (isUnavailable(error) || !db.inTransaction) throw error
          failures.set(index, error)
          return
        }
        if (item.kind === 'run' && isCapped(item.cap)) {
          const tally = runsByProject.get(item.projectId) ?? { inserted: 0, cap: item.cap }
          tally.inserted += 1
          tally.cap = item.cap
          runsByProject.set(item.projectId, tally)
        }
      })
      for (const [projectId, { inserted, cap }] of runsByProject) {
        try {
          this.noteRuns(projectId, inserted, cap)
        } catch {
          // Rolled back to its savepoint; the count is forgotten and read again with the next batch.
          this.history.forget(projectId)
          if (!db.inTransaction) throw new Error('the history trim ended the transaction')
        }
      }
    })
    this.batcher = new WriteBatcher((items) => guard(() => this.commit(items)))
  }

  add(write: SqliteWrite): Promise<void> {
    return this.batcher.add(write)
  }

  drain(): Promise<void> {
    return this.batcher.drain()
  }

  private commit(items: SqliteWrite[]): CommitResult {
    const failures = new Map<number, unknown>()
    this.commitBatch.immediate(items, failures)
    return failures.size > 0 ? failures : undefined
  }
}
