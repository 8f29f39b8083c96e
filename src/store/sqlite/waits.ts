// Parked runs in SQLite (SPEC §22, src/model/waits.ts). Every write is one short IMMEDIATE
// transaction (or one statement) on the store's main connection, so processes sharing the file
// each see a row move from one status to the next once: a claim is one `UPDATE … RETURNING` under
// SQLite's write lock, and a cheap read first keeps idle polling from taking that lock at all.
// The waiting and the final history records are upserts on `runs` (the final one replaces the
// waiting one), written in the transaction that moves the parked row. A first park counts toward the
// history cap (history-cap.ts), whose trim never deletes a `waiting` record.
import type Database from 'better-sqlite3'
import { randomBytes } from 'node:crypto'
import type { RunDetailsText, RunDocument, RunRecord, WaitStore } from '../../model/store.js'
import { ParkClaimLost, PARKED_RETENTION_MS, type ClaimedParkedRun, type DeliverResult, type ParkedRunInfo, type ParkedRunWrite } from '../../model/waits.js'
import type { HistoryCap } from '../history-cap.js'
import type { RecordedListeners } from '../recorded.js'
import { RUN_COLUMNS, RUN_DETAIL_COLUMNS, runValues } from '../rows.js'

/** The values of `runValues`: the record's columns, then input and trace. */
const RUN_VALUE_COUNT = RUN_COLUMNS.split(',').length + RUN_DETAIL_COLUMNS.split(',').length

interface ParkedRow {
  id: string
  project_id: string
  flow: string
  kind: ClaimedParkedRun['kind']
  status: ParkedRunInfo['status']
  due_at: number
  seq: number
  state: string
  payload: string | null
  port: ClaimedParkedRun['port'] | null
  claim_token: string
}

const UPSERT_RUN = `INSERT INTO runs (${RUN_COLUMNS}, ${RUN_DETAIL_COLUMNS}) VALUES (${Array(RUN_VALUE_COUNT).fill('?').join(', ')})
  ON CONFLICT (id) DO UPDATE SET duration_ms = excluded.duration_ms, status = excluded.status, http_status = excluded.http_status,
    ports = excluded.ports, failed_node_id = excluded.failed_node_id, error = excluded.error, input = excluded.input, trace = excluded.trace`

export class SqliteWaits implements WaitStore {
  private readonly statements: Record<string, Database.Statement>
  private readonly parkTx: (run: ParkedRunWrite, record: RunRecord, details: RunDetailsText | undefined) => void
  private readonly finishTx: (record: RunRecord, details: RunDetailsText | undefined, token: string, response: string) => void
  private readonly keys = new Map<string, string>()
  private lastPrune = 0

  constructor(
    private readonly db: Database.Database,
    private readonly insertDocuments: (projectId: string, documents: readonly RunDocument[]) => Promise<void>,
    /** `history.onRecorded`'s listeners: told of each waiting and finished record, like any recorded run. */
    private readonly recorded: RecordedListeners,
    /** The history cap of the store's runs: a parked run's record is one of them. */
    private readonly cap: HistoryCap,
  ) {
    const prepare = (sql: string) => db.prepare(sql)
    this.statements = {
      key: prepare('SELECT key FROM resume_keys WHERE project_id = ?'),
      addKey: prepare('INSERT INTO resume_keys (project_id, key) VALUES (?, ?) ON CONFLICT (project_id) DO NOTHING'),
      insert: prepare(`INSERT INTO parked_runs (id, project_id, flow, kind, status, due_at, seq, state) VALUES (?, ?, ?, ?, 'waiting', ?, ?, ?)`),
      repark: prepare(`UPDATE parked_runs SET kind = ?, status = 'waiting', due_at = ?, seq = ?, state = ?, payload = NULL, port = NULL,
        claim_token = NULL, lease_until = NULL WHERE id = ? AND claim_token = ? AND status = 'running'`),
      asyncWaiting: prepare(`UPDATE async_runs SET status = 'waiting', claim_token = NULL, lease_until = NULL
        WHERE id = ? AND claim_token = ? AND status = 'running'`),
      asyncDone: prepare(`UPDATE async_runs SET status = ?, response = ?, finished_at = ?, input = NULL WHERE id = ? AND status = 'waiting'`),
      upsertRun: prepare(UPSERT_RUN),
      deliver: prepare(`UPDATE parked_runs SET status = 'ready', payload = ?, port = 'out'
        WHERE project_id = ? AND id = ? AND seq = ? AND kind = 'callback' AND status = 'waiting' AND due_at > ?`),
      lookup: prepare('SELECT id, flow, kind, status, due_at, seq, port FROM parked_runs WHERE project_id = ? AND id = ?'),
      due: prepare(`SELECT EXISTS (SELECT 1 FROM parked_runs WHERE project_id = @project AND status = 'ready')
        OR EXISTS (SELECT 1 FROM parked_runs WHERE project_id = @project AND status = 'waiting' AND due_at <= @now)
        OR EXISTS (SELECT 1 FROM parked_runs WHERE project_id = @project AND status = 'running' AND lease_until < @now) AS due`),
      claim: prepare(`UPDATE parked_runs SET status = 'running', claim_token = @token, lease_until = @until,
          port = CASE WHEN status = 'waiting' THEN (CASE kind WHEN 'callback' THEN 'timeout' ELSE 'out' END) ELSE port END
        WHERE id IN (
          SELECT id FROM parked_runs WHERE project_id = @project AND status = 'ready'
          UNION ALL SELECT id FROM parked_runs WHERE project_id = @project AND status = 'waiting' AND due_at <= @now
          UNION ALL SELECT id FROM parked_runs WHERE project_id = @project AND status = 'running' AND lease_until < @now
          LIMIT @limit)
        RETURNING id, project_id, flow, kind, status, due_at, seq, state, payload, port, claim_token`),
      finish: prepare(`UPDATE parked_runs SET status = 'done', state = '', payload = NULL, claim_token = NULL, lease_until = NULL, finished_at = ?
        WHERE id = ? AND claim_token = ? AND status = 'running'`),
      waiting: prepare(`SELECT count(*) AS n FROM parked_runs WHERE project_id = ? AND status IN ('waiting', 'ready', 'running')`),
      prune: prepare(`DELETE FROM parked_runs WHERE project_id = ? AND status = 'done' AND finished_at < ?`),
    }
    this.parkTx = db.transaction((run, record, details) => this.parkRows(run, record, details))
    this.finishTx = db.transaction((record, details, token, response) => this.finishRows(record, details, token, response))
  }

  async resumeKey(projectId: string): Promise<string> {
    const known = this.keys.get(projectId)
    if (known) return known
    this.statements.addKey!.run(projectId, randomBytes(32).toString('hex'))
    const key = (this.statements.key!.get(projectId) as { key: string }).key
    this.keys.set(projectId, key)
    return key
  }

  async park(
    run: ParkedRunWrite,
    record: RunRecord,
    historyCap: number,
    details: RunDetailsText | undefined,
    documents: readonly RunDocument[],
  ): Promise<void> {
    if (documents.length > 0) await this.insertDocuments(run.projectId, documents)
    immediate(this.parkTx)(run, record, details)
    this.recorded.notify(record, documents)
    // A first park adds the run's record (later parks and the finish replace it): counted once, as recordRun counts.
    if (!run.claimToken) await this.cap.noteRun(run.projectId, historyCap)
  }

  private parkRows(run: ParkedRunWrite, record: RunRecord, details: RunDetailsText | undefined): void {
    const { statements: s } = this
    if (run.asyncClaimToken && s.asyncWaiting!.run(run.id, run.asyncClaimToken).changes !== 1) throw new ParkClaimLost(run.id)
    if (run.claimToken) {
      if (s.repark!.run(run.kind, run.dueAt, run.seq, run.state, run.id, run.claimToken).changes !== 1) throw new ParkClaimLost(run.id)
    } else {
      s.insert!.run(run.id, run.projectId, run.flow, run.kind, run.dueAt, run.seq, run.state)
    }
    s.upsertRun!.run(...runValues(record, details))
  }

  async deliver(projectId: string, id: string, seq: number, payload: string): Promise<DeliverResult> {
    const now = Date.now()
    if (this.statements.deliver!.run(payload, projectId, id, seq, now).changes === 1) return 'delivered'
    const row = await this.lookup(projectId, id)
    if (!row) return 'missing'
    if (row.port === 'timeout' || (row.status === 'waiting' && row.dueAt <= now)) return 'expired'
    return 'already'
  }

  async claimDue(projectId: string, options: { limit: number; leaseMs: number; token: string }): Promise<ClaimedParkedRun[]> {
    const now = Date.now()
    this.pruneDone(projectId, now)
    if (options.limit < 1 || !(this.statements.due!.get({ project: projectId, now }) as { due: number }).due) return []
    const rows = this.statements.claim!.all({
      token: options.token,
      until: now + options.leaseMs,
      project: projectId,
      now,
      limit: options.limit,
    }) as ParkedRow[]
    return rows.map(claimedOf)
  }

  async finish(record: RunRecord, details: RunDetailsText | undefined, claimToken: string, response: string, documents: readonly RunDocument[]): Promise<void> {
    if (documents.length > 0) await this.insertDocuments(record.projectId, documents)
    immediate(this.finishTx)(record, details, claimToken, response)
    this.recorded.notify(record, documents)
  }

  private finishRows(record: RunRecord, details: RunDetailsText | undefined, token: string, response: string): void {
    const { statements: s } = this
    const now = Date.now()
    if (s.finish!.run(now, record.id, token).changes !== 1) throw new ParkClaimLost(record.id)
    s.upsertRun!.run(...runValues(record, details))
    s.asyncDone!.run(record.status === 'error' ? 'error' : 'success', response, new Date(now).toISOString(), record.id)
  }

  async lookup(projectId: string, id: string): Promise<ParkedRunInfo | null> {
    const row = this.statements.lookup!.get(projectId, id) as ParkedRow | undefined
    if (!row) return null
    return { id: row.id, flow: row.flow, kind: row.kind, status: row.status, dueAt: row.due_at, seq: row.seq, port: row.port }
  }

  async countWaiting(projectId: string): Promise<number> {
    return (this.statements.waiting!.get(projectId) as { n: number }).n
  }

  /** Finished rows older than the retention, at most once a minute. */
  private pruneDone(projectId: string, now: number): void {
    if (now - this.lastPrune < 60_000) return
    this.lastPrune = now
    this.statements.prune!.run(projectId, now - PARKED_RETENTION_MS)
  }
}

/** better-sqlite3's transaction function, taking the write lock at BEGIN (no upgrade deadlock). */
function immediate<A extends unknown[]>(tx: (...args: A) => void): (...args: A) => void {
  return (...args) => (tx as unknown as { immediate: (...args: A) => void }).immediate(...args)
}

function claimedOf(row: ParkedRow): ClaimedParkedRun {
  return {
    id: row.id,
    projectId: row.project_id,
    flow: row.flow,
    kind: row.kind,
    state: row.state,
    port: row.port ?? 'out',
    payload: row.payload,
    seq: row.seq,
    claimToken: row.claim_token,
  }
}
