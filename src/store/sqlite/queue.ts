// The async-run queue in SQLite (SPEC §12, async-runs.ts). Enqueueing and finishing ride in the
// group commit (sqlite/commit.ts), so a 202 costs one row in a shared transaction and a finished
// run's record and queue row commit together. A claim is one BEGIN IMMEDIATE transaction on the
// main connection: it reads each flow's oldest candidates and how many of each flow's runs are
// running, picks fairly across flows (pickFairly), and marks the picked rows claimed; holding the
// write lock throughout, processes sharing the file each get distinct rows. A cheap read first
// tells whether there is anything to claim, so idle polling never takes the write lock. Every read
// is a range of the (project_id, status, flow, received_at) index: a claim costs a few index seeks
// per flow with queued runs, not a scan of the backlog.
import type Database from 'better-sqlite3'
import {
  AsyncClaimLost,
  claimedRuns,
  pickFairly,
  type AsyncCandidate,
  type AsyncRunState,
  type ClaimedAsyncRow,
  type ClaimedAsyncRun,
  type ClaimOptions,
  type AsyncRunCompletion,
  type NewAsyncRun,
} from '../../model/async-runs.js'
import type { QueuePort, RunDetailsText, RunDocument, RunRecord } from '../../model/store.js'
import { canonicalIso } from '../ids.js'
import { AsyncPruneSchedule } from '../retention.js'
import { runValues } from '../rows.js'
import { documentRows, type SqliteWriter } from './commit.js'
import { guarded } from './connection.js'

/** The queue port: enqueues and finishes ride in the group commit (commit.ts), the rest runs on the main connection. */
export class SqliteQueue implements QueuePort {
  private readonly reads: SqliteAsyncQueue

  constructor(
    db: Database.Database,
    private readonly writer: SqliteWriter,
  ) {
    this.reads = new SqliteAsyncQueue(db)
  }

  async enqueue(run: NewAsyncRun): Promise<void> {
    const values = [run.id, run.projectId, run.flow, run.method, run.input, canonicalIso(run.receivedAt, 'receivedAt')] // ASYNC_QUEUE_COLUMNS order
    await this.writer.writes.add({ kind: 'async-queued', values })
  }

  async claim(projectId: string, options: ClaimOptions): Promise<ClaimedAsyncRun[]> {
    return guarded(() => this.reads.claimRuns(projectId, options))
  }

  async renewClaims(tokens: string[], leaseMs: number): Promise<void> {
    guarded(() => this.reads.renewClaims(tokens, Date.now() + leaseMs))
  }

  /** In the group commit, under a savepoint: the record and the queue row commit together or not at all. */
  async finish(
    run: RunRecord,
    historyCap: number,
    details: RunDetailsText | undefined,
    completion: AsyncRunCompletion,
    documents?: readonly RunDocument[],
  ): Promise<void> {
    const { writer } = this
    const finish: [string, string, string, string, string] = [run.status, completion.response, new Date().toISOString(), run.id, completion.claimToken]
    const rows = documentRows(run.projectId, documents)
    const written = writer.writes.add({ kind: 'async-finished', values: runValues(run, details), finish, ...(rows ? { documents: rows } : {}) })
    const trimmed = writer.cap.noteRun(run.projectId, historyCap) // never rejects; a lost claim counted is an early trim
    try {
      await written
    } catch (error) {
      // The run id is the record's primary key: a record already there means the run was recorded.
      if (String((error as { code?: unknown }).code).startsWith('SQLITE_CONSTRAINT')) throw new AsyncClaimLost(run.id)
      throw error
    }
    writer.recorded.notify(run, documents)
    if (trimmed) await trimmed
  }

  async release(id: string, token: string): Promise<void> {
    guarded(() => this.reads.releaseRun(id, token))
  }

  async get(projectId: string, id: string): Promise<AsyncRunState | null> {
    return guarded(() => this.reads.getRun(projectId, id))
  }

  async countQueued(projectId: string): Promise<number> {
    return guarded(() => this.reads.countQueued(projectId))
  }
}

interface CandidateRow {
  id: string
  flow: string
  received_at: string
}

/** Claims, renewals, releases and reads on the store's main connection. */
class SqliteAsyncQueue {
  private readonly due: Database.Statement
  private readonly queuedFlows: Database.Statement
  private readonly queuedOfFlow: Database.Statement
  private readonly expired: Database.Statement
  private readonly busy: Database.Statement
  private readonly claim: Database.Statement
  private readonly claimFairly: (projectId: string, options: ClaimOptions, now: number) => ClaimedAsyncRow[]
  private readonly renew: Database.Statement
  private readonly release: Database.Statement
  private readonly get: Database.Statement
  private readonly queued: Database.Statement
  private readonly prune: Database.Statement
  private readonly prunes = new AsyncPruneSchedule()

  constructor(db: Database.Database) {
    this.due = db.prepare(`SELECT EXISTS (SELECT 1 FROM async_runs WHERE project_id = ? AND status = 'queued')
      OR EXISTS (SELECT 1 FROM async_runs WHERE project_id = ? AND status = 'running' AND lease_until < ?) AS due`)
    // The project's flows with queued runs, one index seek each (a loose index scan).
    this.queuedFlows = db.prepare(`WITH RECURSIVE flows(flow) AS (
        SELECT (SELECT MIN(flow) FROM async_runs WHERE project_id = @project AND status = 'queued')
        UNION ALL
        SELECT (SELECT MIN(flow) FROM async_runs WHERE project_id = @project AND status = 'queued' AND flow > flows.flow)
        FROM flows WHERE flows.flow IS NOT NULL
      )
      SELECT flow FROM flows WHERE flow IS NOT NULL`)
    this.queuedOfFlow = db.prepare(`SELECT id, flow, received_at FROM async_runs
      WHERE project_id = ? AND status = 'queued' AND flow = ? ORDER BY received_at, id LIMIT ?`)
    // Running rows are few (at most the workers of every instance), so these two read them all.
    this.expired = db.prepare(`SELECT id, flow, received_at FROM async_runs WHERE project_id = ? AND status = 'running' AND lease_until < ?`)
    this.busy = db.prepare(`SELECT flow, count(*) AS n FROM async_runs WHERE project_id = ? AND status = 'running' AND lease_until >= ? GROUP BY flow`)
    // By primary key: the unary + keeps the planner from scanning the project's rows through the flow index.
    this.claim = db.prepare(`UPDATE async_runs SET status = 'running', claim_token = @token, lease_until = @until, attempts = attempts + 1
      WHERE id IN (SELECT value FROM json_each(@ids)) AND +project_id = @project
        AND (+status = 'queued' OR (+status = 'running' AND lease_until < @now))
      RETURNING id, project_id, flow, method, input, received_at, attempts, claim_token`)
    // One write transaction: what was read is still true when the picked rows are marked.
    const claimFairly = db.transaction((projectId: string, options: ClaimOptions, now: number) => this.pickAndClaim(projectId, options, now))
    this.claimFairly = (projectId, options, now) => claimFairly.immediate(projectId, options, now)
    this.renew = db.prepare(`UPDATE async_runs SET lease_until = ?
      WHERE claim_token IN (SELECT value FROM json_each(?)) AND status = 'running'`)
    this.release = db.prepare(`UPDATE async_runs SET status = 'queued', claim_token = NULL, lease_until = NULL
      WHERE id = ? AND claim_token = ? AND status = 'running'`)
    this.get = db.prepare('SELECT id, flow, status, response FROM async_runs WHERE project_id = ? AND id = ?')
    this.queued = db.prepare(`SELECT COUNT(*) AS n FROM async_runs WHERE project_id = ? AND status = 'queued'`)
    this.prune = db.prepare('DELETE FROM async_runs WHERE project_id = ? AND finished_at < ?')
  }

  claimRuns(projectId: string, options: ClaimOptions): ClaimedAsyncRun[] {
    const now = Date.now()
    this.pruneFinished(projectId, now)
    if (options.limit < 1 || !(this.due.get(projectId, projectId, now) as { due: number }).due) return []
    return claimedRuns(this.claimFairly(projectId, options, now))
  }

  /** Reads each flow's oldest candidates and running counts, picks fairly, and claims the picked rows. */
  private pickAndClaim(projectId: string, options: ClaimOptions, now: number): ClaimedAsyncRow[] {
    const limit = Math.floor(options.limit)
    const candidates: AsyncCandidate[] = []
    const add = (row: CandidateRow) => candidates.push({ id: row.id, flow: row.flow, receivedAt: row.received_at })
    for (const { flow } of this.queuedFlows.all({ project: projectId }) as { flow: string }[]) {
      for (const row of this.queuedOfFlow.all(projectId, flow, limit) as CandidateRow[]) add(row)
    }
    for (const row of this.expired.all(projectId, now) as CandidateRow[]) add(row)
    const busy = new Map((this.busy.all(projectId, now) as { flow: string; n: number }[]).map((row) => [row.flow, row.n]))
    const ids = pickFairly(candidates, busy, limit)
    if (ids.length === 0) return []
    return this.claim.all({ token: options.token, until: now + options.leaseMs, project: projectId, now, ids: JSON.stringify(ids) }) as ClaimedAsyncRow[]
  }

  renewClaims(tokens: string[], leaseUntil: number): void {
    if (tokens.length > 0) this.renew.run(leaseUntil, JSON.stringify(tokens))
  }

  releaseRun(id: string, token: string): void {
    this.release.run(id, token)
  }

  countQueued(projectId: string): number {
    return (this.queued.get(projectId) as { n: number }).n
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
