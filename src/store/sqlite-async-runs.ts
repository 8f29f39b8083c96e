// The async-run queue in SQLite (SPEC §12, async-runs.ts). Enqueueing and finishing ride in the
// group commit (sqlite-commit.ts), so a 202 costs one row in a shared transaction and a finished
// run's record and queue row commit together. Claims are one UPDATE ... RETURNING on the main
// connection: SQLite holds the write lock for the statement, so processes sharing the file each get
// distinct rows. A cheap read first tells whether there is anything to claim, so idle polling never
// takes the write lock.
import type Database from 'better-sqlite3'
import { AsyncClaimLost, claimedRuns, type AsyncRunState, type ClaimedAsyncRow, type ClaimedAsyncRun, type ClaimOptions } from '../model/async-runs.js'
import { AsyncPruneSchedule } from './retention.js'

/** Column order of an enqueued row (the values of a `async-queued` write). */
export const ASYNC_QUEUE_COLUMNS = 'id, project_id, flow, method, input, received_at'

/** The statements of the group commit (prepared on whichever connection commits). */
export class SqliteAsyncWrites {
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

/** Claims, renewals, releases and reads on the store's main connection. */
export class SqliteAsyncQueue {
  private readonly due: Database.Statement
  private readonly claim: Database.Statement
  private readonly renew: Database.Statement
  private readonly release: Database.Statement
  private readonly get: Database.Statement
  private readonly prune: Database.Statement
  private readonly prunes = new AsyncPruneSchedule()

  constructor(db: Database.Database) {
    this.due = db.prepare(`SELECT EXISTS (SELECT 1 FROM async_runs WHERE project_id = ? AND status = 'queued')
      OR EXISTS (SELECT 1 FROM async_runs WHERE project_id = ? AND status = 'running' AND lease_until < ?) AS due`)
    this.claim = db.prepare(`UPDATE async_runs SET status = 'running', claim_token = @token, lease_until = @until, attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM async_runs
        WHERE project_id = @project AND (status = 'queued' OR (status = 'running' AND lease_until < @now))
        ORDER BY received_at, id LIMIT @limit
      )
      RETURNING id, project_id, flow, method, input, received_at, attempts, claim_token`)
    this.renew = db.prepare(`UPDATE async_runs SET lease_until = ?
      WHERE claim_token IN (SELECT value FROM json_each(?)) AND status = 'running'`)
    this.release = db.prepare(`UPDATE async_runs SET status = 'queued', claim_token = NULL, lease_until = NULL
      WHERE id = ? AND claim_token = ? AND status = 'running'`)
    this.get = db.prepare('SELECT id, flow, status, response FROM async_runs WHERE project_id = ? AND id = ?')
    this.prune = db.prepare('DELETE FROM async_runs WHERE project_id = ? AND finished_at < ?')
  }

  claimRuns(projectId: string, options: ClaimOptions): ClaimedAsyncRun[] {
    const now = Date.now()
    this.pruneFinished(projectId, now)
    if (options.limit < 1 || !(this.due.get(projectId, projectId, now) as { due: number }).due) return []
    const rows = this.claim.all({
      token: options.token,
      until: now + options.leaseMs,
      project: projectId,
      now,
      limit: Math.floor(options.limit),
    }) as ClaimedAsyncRow[]
    return claimedRuns(rows)
  }

  renewClaims(tokens: string[], leaseUntil: number): void {
    if (tokens.length > 0) this.renew.run(leaseUntil, JSON.stringify(tokens))
  }

  releaseRun(id: string, token: string): void {
    this.release.run(id, token)
  }

  getRun(projectId: string, id: string): AsyncRunState | null {
    const row = this.get.get(projectId, id) as { id: string; flow: string; status: AsyncRunState['status']; response: string | null } | undefined
    if (!row) return null
    return {
      runId: row.id,
      flow: row.flow,
      status: row.status,
      response: row.response === null ? null : (JSON.parse(row.response) as AsyncRunState['response']),
    }
  }

  private pruneFinished(projectId: string, now: number): void {
    const before = this.prunes.due(projectId, now)
    if (before !== null) this.prune.run(projectId, before)
  }
}
