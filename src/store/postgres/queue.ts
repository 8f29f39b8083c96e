// The async-run queue in PostgreSQL (SPEC §12, async-runs.ts). Any instance takes queued work.
// A claim is two statements: one read of each flow's oldest candidates and how many of its runs
// are running (on every instance), from which pickFairly chooses round-robin across flows (SPEC
// §18); then an UPDATE of the chosen rows that locks them with `FOR UPDATE SKIP LOCKED` and checks
// again that each is still claimable, so concurrent claimers pass over each other's rows instead of
// waiting or taking them twice (exactly once, whatever the read saw). Enqueues and finishes are group-committed like runs
// (one statement per batch). A finish is one statement too: the UPDATE of the queue rows still
// claimed with the worker's token and the INSERT of exactly those runs' records, so the record
// and the completion commit together, and a stale token writes neither. Leases use the server's
// clock (now()), so instances with skewed clocks agree.
import {
  AsyncClaimLost,
  claimedRuns,
  pickFairly,
  type AsyncRunCompletion,
  type AsyncRunState,
  type ClaimedAsyncRun,
  type ClaimOptions,
  type NewAsyncRun,
} from '../../model/async-runs.js'
import type { QueuePort, RunDetailsText, RunDocument, RunRecord } from '../../model/store.js'
import { canonicalIso } from '../ids.js'
import { RUN_COLUMNS, RUN_DETAIL_COLUMNS, RUN_VALUE_COUNT } from '../rows.js'
import { AsyncPruneSchedule } from '../retention.js'
import { WriteBatcher } from '../write-batch.js'
import { MAX_COMMITS_IN_FLIGHT, type PgWriter } from './commit.js'
import type { PgQuery } from './connection.js'
import { insertDocumentsCte, pgDocumentRows, pgRunValues, pushDocumentColumns, type PgDocumentRow } from './sql.js'

interface PgClaimedRow extends Record<string, unknown> {
  id: string
  project_id: string
  flow: string
  method: string
  input: string
  received_at: Date
  attempts: number
  claim_token: string
}

const ASYNC_SQL = {
  queued: `SELECT COUNT(*) AS n FROM async_runs WHERE project_id = $1 AND status = 'queued'`,
  enqueue: `INSERT INTO async_runs (id, project_id, flow, method, input, received_at)
    SELECT q.id, q.project_id, q.flow, q.method, q.input, q.received_at::timestamptz
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS q(id, project_id, flow, method, input, received_at)`,
  // The flows with waiting runs are walked one index seek at a time (a loose index scan), and per
  // flow its running count and oldest candidates are index ranges: no scan of a flow's backlog.
  candidates: `WITH RECURSIVE flows(flow) AS (
      (SELECT flow FROM async_runs WHERE project_id = $1 AND status IN ('queued', 'running') ORDER BY flow LIMIT 1)
      UNION ALL
      SELECT (SELECT a.flow FROM async_runs a WHERE a.project_id = $1 AND a.status IN ('queued', 'running') AND a.flow > f.flow ORDER BY a.flow LIMIT 1)
      FROM flows f WHERE f.flow IS NOT NULL
    )
    SELECT c.id, c.flow, c.received_at, b.busy
    FROM flows f
    CROSS JOIN LATERAL (
      SELECT count(*)::int AS busy FROM async_runs WHERE project_id = $1 AND flow = f.flow AND status = 'running' AND lease_until >= now()
    ) b
    CROSS JOIN LATERAL (
      (SELECT id, flow, received_at FROM async_runs WHERE project_id = $1 AND flow = f.flow AND status = 'queued' ORDER BY received_at, id LIMIT $2)
      UNION ALL
      (SELECT id, flow, received_at FROM async_runs WHERE project_id = $1 AND flow = f.flow AND status = 'running' AND lease_until < now())
    ) c
    WHERE f.flow IS NOT NULL`,
  claim: `UPDATE async_runs SET status = 'running', claim_token = $2, lease_until = now() + $3::int * interval '1 millisecond', attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM async_runs
      WHERE id = ANY($4::text[]) AND project_id = $1 AND status IN ('queued', 'running') AND (status = 'queued' OR lease_until < now())
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id, project_id, flow, method, input, received_at, attempts, claim_token`,
  renew: `UPDATE async_runs SET lease_until = now() + $2::int * interval '1 millisecond' WHERE claim_token = ANY($1::text[]) AND status = 'running'`,
  release: `UPDATE async_runs SET status = 'queued', claim_token = NULL, lease_until = NULL WHERE id = $1 AND claim_token = $2 AND status = 'running'`,
  get: 'SELECT id, flow, status, response FROM async_runs WHERE project_id = $1 AND id = $2',
  prune: `DELETE FROM async_runs WHERE project_id = $1 AND finished_at < $2::timestamptz`,
  // The 17 run columns, the claim token and the response, then the runs' documents (written only
  // for the runs whose claim held), as parallel arrays.
  finish: `WITH f AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[], $9::int[],
        $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[])
        WITH ORDINALITY AS f(id, project_id, flow, trig, method, started_at, duration_ms, status, http_status, ports, failed_node_id, error,
          scheduled_for, replay_of, resumed_from, input, trace, token, response, n)
    ), done AS (
      UPDATE async_runs a SET status = f.status, response = f.response::jsonb, finished_at = now(), input = NULL, claim_token = NULL, lease_until = NULL
      FROM f WHERE a.id = f.id AND a.claim_token = f.token AND a.status = 'running'
      RETURNING a.id
    ), ${insertDocumentsCte(RUN_VALUE_COUNT + 3, true)}
    INSERT INTO runs (${RUN_COLUMNS}, ${RUN_DETAIL_COLUMNS})
    SELECT f.id, f.project_id, f.flow, f.trig, f.method, f.started_at::timestamptz, f.duration_ms, f.status, f.http_status,
      f.ports::jsonb, f.failed_node_id, f.error, f.scheduled_for::timestamptz, f.replay_of, f.resumed_from, f.input, f.trace
    FROM f JOIN done ON done.id = f.id
    ORDER BY f.n
    RETURNING id`,
}

/** A finished run waiting for the next group commit: its id and values (pgRunValues). */
export interface PgAsyncFinish {
  id: string
  values: unknown[]
  completion: AsyncRunCompletion
  documents: PgDocumentRow[] | undefined
}

/** The queue port: enqueues and finishes are group-committed (one statement per batch), like runs. */
export class PostgresQueue implements QueuePort {
  private readonly prunes = new AsyncPruneSchedule()
  private readonly enqueues = new WriteBatcher<NewAsyncRun>(async (runs) => void (await this.enqueueBatch(runs)), MAX_COMMITS_IN_FLIGHT)
  private readonly finishes = new WriteBatcher<PgAsyncFinish>((items) => this.finishBatch(items), MAX_COMMITS_IN_FLIGHT)

  constructor(
    private readonly query: PgQuery,
    private readonly writer: PgWriter,
  ) {}

  async enqueue(run: NewAsyncRun): Promise<void> {
    await this.enqueues.add({ ...run, receivedAt: canonicalIso(run.receivedAt, 'receivedAt') })
  }

  /** Group commit: the record and the queue row's completion are one statement (ASYNC_SQL.finish). */
  async finish(
    run: RunRecord,
    historyCap: number,
    details: RunDetailsText | undefined,
    completion: AsyncRunCompletion,
    documents?: readonly RunDocument[],
  ): Promise<void> {
    const { writer } = this
    await this.finishes.add({ id: run.id, values: pgRunValues(run, details), completion, documents: pgDocumentRows(run.projectId, documents) })
    writer.recorded.notify(run, documents)
    await writer.cap.noteRun(run.projectId, historyCap)
  }

  /** Resolves once every enqueue and finish accepted so far committed (or failed). */
  async drain(): Promise<void> {
    await Promise.all([this.enqueues.drain(), this.finishes.drain()])
  }

  private async enqueueBatch(runs: NewAsyncRun[]): Promise<void> {
    const columns: unknown[][] = [[], [], [], [], [], []]
    for (const run of runs) [run.id, run.projectId, run.flow, run.method, run.input, run.receivedAt].forEach((value, i) => columns[i]!.push(value))
    await this.query('flowctl_async_enqueue', ASYNC_SQL.enqueue, columns)
  }

  async claim(projectId: string, options: ClaimOptions): Promise<ClaimedAsyncRun[]> {
    await this.pruneFinished(projectId)
    const claimed: ClaimedAsyncRun[] = []
    // A second pass only when another instance took some of the rows this one picked meanwhile.
    for (let pass = 0; pass < 2 && claimed.length < Math.floor(options.limit); pass++) {
      const ids = await this.pick(projectId, Math.floor(options.limit) - claimed.length)
      if (ids.length === 0) break
      const { rows } = await this.query<PgClaimedRow>('flowctl_async_claim', ASYNC_SQL.claim, [projectId, options.token, Math.ceil(options.leaseMs), ids])
      claimed.push(...claimedRuns(rows.map((row) => ({ ...row, received_at: row.received_at.toISOString() }))))
      if (rows.length === ids.length) break
    }
    return claimed
  }

  /** The ids a claim of at most `limit` runs takes now (pickFairly over every flow's oldest candidates). */
  private async pick(projectId: string, limit: number): Promise<string[]> {
    if (limit < 1) return []
    const { rows } = await this.query<{ id: string; flow: string; received_at: Date; busy: number }>('flowctl_async_candidates', ASYNC_SQL.candidates, [
      projectId,
      limit,
    ])
    if (rows.length === 0) return []
    const busy = new Map(rows.map((row) => [row.flow, row.busy]))
    return pickFairly(
      rows.map((row) => ({ id: row.id, flow: row.flow, receivedAt: row.received_at.toISOString() })),
      busy,
      limit,
    )
  }

  async renewClaims(tokens: string[], leaseMs: number): Promise<void> {
    if (tokens.length > 0) await this.query('flowctl_async_renew', ASYNC_SQL.renew, [tokens, Math.ceil(leaseMs)])
  }

  async release(id: string, token: string): Promise<void> {
    await this.query('flowctl_async_release', ASYNC_SQL.release, [id, token])
  }

  async countQueued(projectId: string): Promise<number> {
    const { rows } = await this.query<{ n: string }>('flowctl_async_queued', ASYNC_SQL.queued, [projectId])
    return Number(rows[0]?.n ?? 0)
  }

  async get(projectId: string, id: string): Promise<AsyncRunState | null> {
    const { rows } = await this.query<{ id: string; flow: string; status: AsyncRunState['status']; response: AsyncRunState['response'] }>(
      'flowctl_async_get',
      ASYNC_SQL.get,
      [projectId, id],
    )
    const row = rows[0]
    return row ? { runId: row.id, flow: row.flow, status: row.status, response: row.response ?? null } : null
  }

  /**
   * Writes a batch of finished runs in one statement; per item index, the error of those not written
   * (AsyncClaimLost). A statement that fails as a whole (a record already there) is retried one by one.
   */
  private async finishBatch(items: PgAsyncFinish[]): Promise<Map<number, unknown> | undefined> {
    try {
      return await this.finishStatement(items)
    } catch (error) {
      if (items.length === 1) throw duplicateAsClaimLost(error, items[0]!.id)
    }
    const failures = new Map<number, unknown>()
    for (const [index, item] of items.entries()) {
      try {
        const lost = await this.finishStatement([item])
        if (lost) failures.set(index, lost.get(0))
      } catch (error) {
        failures.set(index, duplicateAsClaimLost(error, item.id))
      }
    }
    return failures.size > 0 ? failures : undefined
  }

  private async finishStatement(items: PgAsyncFinish[]): Promise<Map<number, unknown> | undefined> {
    // The run's values, its claim token and response, the 5 document columns and each document's run id.
    const columns: unknown[][] = Array.from({ length: RUN_VALUE_COUNT + 8 }, () => [])
    for (const { id, values, completion, documents } of items) {
      values.forEach((value, i) => columns[i]!.push(value))
      columns[RUN_VALUE_COUNT]!.push(completion.claimToken)
      columns[RUN_VALUE_COUNT + 1]!.push(completion.response)
      if (documents) {
        pushDocumentColumns(columns, RUN_VALUE_COUNT + 2, documents)
        for (let i = 0; i < documents.length; i++) columns[RUN_VALUE_COUNT + 7]!.push(id)
      }
    }
    const { rows } = await this.query<{ id: string }>('flowctl_async_finish', ASYNC_SQL.finish, columns)
    const written = new Set(rows.map((row) => row.id))
    const failures = new Map<number, unknown>()
    items.forEach((item, index) => {
      if (!written.has(item.id)) failures.set(index, new AsyncClaimLost(item.id))
    })
    return failures.size > 0 ? failures : undefined
  }

  private async pruneFinished(projectId: string): Promise<void> {
    const before = this.prunes.due(projectId, Date.now())
    if (before !== null) await this.query('flowctl_async_prune', ASYNC_SQL.prune, [projectId, before])
  }
}

/** A unique violation on the record means the run is already recorded: the claim is not ours to finish. */
function duplicateAsClaimLost(error: unknown, runId: string): unknown {
  return (error as { code?: unknown } | null)?.code === '23505' ? new AsyncClaimLost(runId) : error
}
