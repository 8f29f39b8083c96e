// Parked runs in PostgreSQL (SPEC §22, src/model/waits.ts). Every write is one statement: parking
// moves the parked row (and an async run's queue row) and upserts the `waiting` history record in
// one set of CTEs; finishing marks the row done and writes the final record only when the row is
// still claimed with the worker's token. A first park counts toward the history cap
// (history-cap.ts), whose trim never deletes a `waiting` record. Claims pick rows `FOR UPDATE SKIP LOCKED`, so instances
// never take one row twice, and every time is the server's clock (instances with skewed clocks
// agree on due times and leases). Any instance resumes any run: exactly once, whichever it is.
import { randomBytes } from 'node:crypto'
import type { QueryResultRow } from 'pg'
import type { RunDetailsText, RunDocument, RunRecord, WaitStore } from '../../model/store.js'
import { ParkClaimLost, PARKED_RETENTION_MS, type ClaimedParkedRun, type DeliverResult, type ParkedRunInfo, type ParkedRunWrite } from '../../model/waits.js'
import type { HistoryCap } from '../history-cap.js'
import type { RecordedListeners } from '../recorded.js'
import { RUN_COLUMNS, RUN_DETAIL_COLUMNS } from '../rows.js'
import { pgRunValues } from './sql.js'
import { jsonbSafe } from './text.js'

type Query = <Row extends QueryResultRow>(name: string, text: string, values: unknown[]) => Promise<{ rows: Row[]; rowCount: number }>

/** The record's 17 values (runValues) from parameter `first` on, upserted over its waiting record. */
function upsertRun(first: number, when: string): string {
  const p = (i: number) => `$${first + i}`
  return `INSERT INTO runs (${RUN_COLUMNS}, ${RUN_DETAIL_COLUMNS})
    SELECT ${p(0)}::text, ${p(1)}::text, ${p(2)}::text, ${p(3)}::text, ${p(4)}::text, ${p(5)}::timestamptz, ${p(6)}::float8, ${p(7)}::text,
      ${p(8)}::int, ${p(9)}::jsonb, ${p(10)}::text, ${p(11)}::text, ${p(12)}::timestamptz, ${p(13)}::text, ${p(14)}::text, ${p(15)}::text, ${p(16)}::text
    WHERE ${when}
    ON CONFLICT (id) DO UPDATE SET duration_ms = excluded.duration_ms, status = excluded.status, http_status = excluded.http_status,
      ports = excluded.ports, failed_node_id = excluded.failed_node_id, error = excluded.error, input = excluded.input, trace = excluded.trace
    RETURNING 1`
}

const SQL = {
  key: 'SELECT key FROM resume_keys WHERE project_id = $1',
  addKey: 'INSERT INTO resume_keys (project_id, key) VALUES ($1, $2) ON CONFLICT (project_id) DO NOTHING',
  // $1 id, $2 project, $3 flow, $4 kind, $5 due (epoch ms), $6 seq, $7 state, $8 claim token (re-park), $9 async token, then the record.
  park: `WITH a AS (
      UPDATE async_runs SET status = 'waiting', claim_token = NULL, lease_until = NULL
      WHERE $9::text IS NOT NULL AND id = $1::text AND claim_token = $9::text AND status = 'running' RETURNING 1
    ), p AS (
      INSERT INTO parked_runs (id, project_id, flow, kind, status, due_at, seq, state)
      SELECT $1::text, $2::text, $3::text, $4::text, 'waiting', to_timestamp($5::float8 / 1000), $6::int, $7::text
      WHERE $9::text IS NULL OR EXISTS (SELECT 1 FROM a)
      ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, status = 'waiting', due_at = excluded.due_at, seq = excluded.seq,
        state = excluded.state, payload = NULL, port = NULL, claim_token = NULL, lease_until = NULL
      WHERE parked_runs.claim_token = $8::text AND parked_runs.status = 'running'
      RETURNING 1
    ), r AS (${upsertRun(10, 'EXISTS (SELECT 1 FROM p)')})
    SELECT count(*)::int AS n FROM p`,
  deliver: `UPDATE parked_runs SET status = 'ready', payload = $4, port = 'out'
    WHERE project_id = $1 AND id = $2 AND seq = $3 AND kind = 'callback' AND status = 'waiting' AND due_at > now()`,
  lookup: `SELECT id, flow, kind, status, (extract(epoch FROM due_at) * 1000)::float8 AS due_at, seq, port, due_at <= now() AS past
    FROM parked_runs WHERE project_id = $1 AND id = $2`,
  claim: `WITH picked AS (
      SELECT id FROM parked_runs
      WHERE project_id = $1 AND (status = 'ready' OR (status = 'waiting' AND due_at <= now()) OR (status = 'running' AND lease_until < now()))
      LIMIT $2 FOR UPDATE SKIP LOCKED
    )
    UPDATE parked_runs SET status = 'running', claim_token = $3, lease_until = now() + $4::int * interval '1 millisecond',
      port = CASE WHEN parked_runs.status = 'waiting' THEN (CASE parked_runs.kind WHEN 'callback' THEN 'timeout' ELSE 'out' END) ELSE parked_runs.port END
    FROM picked WHERE parked_runs.id = picked.id
    RETURNING parked_runs.id, project_id, flow, kind, state, payload, port, seq, claim_token`,
  // $1 token, $2 response (jsonb text), then the record.
  finish: `WITH p AS (
      UPDATE parked_runs SET status = 'done', state = '', payload = NULL, claim_token = NULL, lease_until = NULL, finished_at = now()
      WHERE id = $3::text AND claim_token = $1::text AND status = 'running' RETURNING 1
    ), r AS (${upsertRun(3, 'EXISTS (SELECT 1 FROM p)')}
    ), a AS (
      UPDATE async_runs SET status = CASE WHEN $10::text = 'error' THEN 'error' ELSE 'success' END, response = $2::jsonb, finished_at = now(), input = NULL
      WHERE id = $3::text AND status = 'waiting' AND EXISTS (SELECT 1 FROM p)
    )
    SELECT count(*)::int AS n FROM p`,
  waiting: `SELECT count(*)::int AS n FROM parked_runs WHERE project_id = $1 AND status IN ('waiting', 'ready', 'running')`,
  prune: `DELETE FROM parked_runs WHERE project_id = $1 AND status = 'done' AND finished_at < now() - $2::int * interval '1 second'`,
}

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
  past: boolean
}

export class PostgresWaits implements WaitStore {
  private readonly keys = new Map<string, string>()
  private lastPrune = 0

  constructor(
    private readonly query: Query,
    private readonly insertDocuments: (projectId: string, documents: readonly RunDocument[]) => Promise<void>,
    /** `history.onRecorded`'s listeners: told of each waiting and finished record, like any recorded run. */
    private readonly recorded: RecordedListeners,
    /** The history cap of the store's runs: a parked run's record is one of them. */
    private readonly cap: HistoryCap,
  ) {}

  async resumeKey(projectId: string): Promise<string> {
    const known = this.keys.get(projectId)
    if (known) return known
    await this.query('flowctl_add_resume_key', SQL.addKey, [projectId, randomBytes(32).toString('hex')])
    const { rows } = await this.query<{ key: string }>('flowctl_resume_key', SQL.key, [projectId])
    const key = rows[0]!.key
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
    const values = [run.id, run.projectId, run.flow, run.kind, run.dueAt, run.seq, run.state, run.claimToken ?? null, run.asyncClaimToken ?? null]
    const { rows } = await this.query<{ n: number }>('flowctl_park_run', SQL.park, [...values, ...pgRunValues(record, details)])
    if (rows[0]?.n !== 1) throw new ParkClaimLost(run.id)
    this.recorded.notify(record, documents)
    // A first park adds the run's record (later parks and the finish replace it): counted once, as recordRun counts.
    if (!run.claimToken) await this.cap.noteRun(run.projectId, historyCap)
  }

  async deliver(projectId: string, id: string, seq: number, payload: string): Promise<DeliverResult> {
    const { rowCount } = await this.query('flowctl_deliver_callback', SQL.deliver, [projectId, id, seq, payload])
    if (rowCount === 1) return 'delivered'
    const { rows } = await this.query<ParkedRow>('flowctl_lookup_parked', SQL.lookup, [projectId, id])
    const row = rows[0]
    if (!row) return 'missing'
    if (row.port === 'timeout' || (row.status === 'waiting' && row.past)) return 'expired'
    return 'already'
  }

  async claimDue(projectId: string, options: { limit: number; leaseMs: number; token: string }): Promise<ClaimedParkedRun[]> {
    await this.pruneDone(projectId)
    if (options.limit < 1) return []
    const { rows } = await this.query<ParkedRow>('flowctl_claim_parked', SQL.claim, [
      projectId,
      Math.floor(options.limit),
      options.token,
      Math.ceil(options.leaseMs),
    ])
    return rows.map((row) => ({
      id: row.id,
      projectId: row.project_id,
      flow: row.flow,
      kind: row.kind,
      state: row.state,
      port: row.port ?? 'out',
      payload: row.payload,
      seq: row.seq,
      claimToken: row.claim_token,
    }))
  }

  async finish(record: RunRecord, details: RunDetailsText | undefined, claimToken: string, response: string, documents: readonly RunDocument[]): Promise<void> {
    if (documents.length > 0) await this.insertDocuments(record.projectId, documents)
    const { rows } = await this.query<{ n: number }>('flowctl_finish_parked', SQL.finish, [claimToken, jsonbSafe(response), ...pgRunValues(record, details)])
    if (rows[0]?.n !== 1) throw new ParkClaimLost(record.id)
    this.recorded.notify(record, documents)
  }

  async lookup(projectId: string, id: string): Promise<ParkedRunInfo | null> {
    const { rows } = await this.query<ParkedRow>('flowctl_lookup_parked', SQL.lookup, [projectId, id])
    const row = rows[0]
    if (!row) return null
    return { id: row.id, flow: row.flow, kind: row.kind, status: row.status, dueAt: Number(row.due_at), seq: row.seq, port: row.port }
  }

  async countWaiting(projectId: string): Promise<number> {
    const { rows } = await this.query<{ n: number }>('flowctl_count_waiting', SQL.waiting, [projectId])
    return rows[0]?.n ?? 0
  }

  private async pruneDone(projectId: string): Promise<void> {
    const now = Date.now()
    if (now - this.lastPrune < 60_000) return
    this.lastPrune = now
    await this.query('flowctl_prune_parked', SQL.prune, [projectId, Math.floor(PARKED_RETENTION_MS / 1000)])
  }
}
