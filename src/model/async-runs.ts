import { compareText } from '../internal/compare.js'
// The durable queue of async runs (SPEC §12, `respond: async`): the store part both stores
// implement (sqlite/queue.ts, postgres/queue.ts) and share one contract suite.
//
// A row's life: `queued` (committed before the 202 is sent) → `running` (claimed by one worker,
// with a token and a lease the worker renews) → `success` | `error`, written in the SAME
// transaction as the run's history record. A claim whose lease ran out (its instance was killed)
// can be claimed again; finishing with a stale token writes nothing, and the history record's
// primary key (the run id) refuses a second record: a run is recorded exactly once.

/** What the Run API commits before answering 202. */
export interface NewAsyncRun {
  /** The run id the 202 names; the history record gets the same id. */
  id: string
  projectId: string
  /** The flow's slug. */
  flow: string
  /** The request's method in upper case (the run's `method` in history). */
  method: string
  /** The request's inputs (RunInput as JSON text): validated before the 202, validated again when the run starts. */
  input: string
  /** ISO time the request was acknowledged. */
  receivedAt: string
}

/** A claimed run, handed to a worker. */
export interface ClaimedAsyncRun {
  id: string
  projectId: string
  flow: string
  method: string
  input: string
  receivedAt: string
  /** 1 the first time it is claimed; more when a lease ran out (its instance died) and it is taken over. */
  attempts: number
  claimToken: string
}

/** A claimed row as both stores read it (`received_at` as ISO text). */
export interface ClaimedAsyncRow {
  id: string
  project_id: string
  flow: string
  method: string
  input: string
  received_at: string
  attempts: number
  claim_token: string
}

/** Claimed rows as the workers take them: oldest first. */
export function claimedRuns(rows: ClaimedAsyncRow[]): ClaimedAsyncRun[] {
  return rows
    .map((row) => ({
      id: row.id,
      projectId: row.project_id,
      flow: row.flow,
      method: row.method,
      input: row.input,
      receivedAt: row.received_at,
      attempts: row.attempts,
      claimToken: row.claim_token,
    }))
    .sort((a, b) => compareText(a.receivedAt, b.receivedAt))
}

/** A run a claim could take: queued, or running with a lease that ran out. */
export interface AsyncCandidate {
  id: string
  flow: string
  /** Canonical ISO text, so text order is time order. */
  receivedAt: string
}

/**
 * Which candidates a claim takes, fairly across flows (SPEC §18, "Async fairness"): round-robin
 * across flows, oldest first within a flow. A flow's nth oldest candidate gets turn `busy + n`, where
 * `busy` is how many of its runs are running now (on any instance), then turns are served in order
 * and, within a turn, the oldest run first. So a flow with a backlog and its workers already busy
 * comes after a flow with nothing running, and a batch claim alternates between flows instead of
 * emptying the oldest backlog first.
 */
export function pickFairly(candidates: readonly AsyncCandidate[], busy: ReadonlyMap<string, number>, limit: number): string[] {
  const byFlow = new Map<string, AsyncCandidate[]>()
  for (const candidate of candidates) {
    const list = byFlow.get(candidate.flow)
    if (list) list.push(candidate)
    else byFlow.set(candidate.flow, [candidate])
  }
  const turns: { turn: number; candidate: AsyncCandidate }[] = []
  for (const [flow, list] of byFlow) {
    list.sort(byAge)
    const first = busy.get(flow) ?? 0
    for (let n = 0; n < Math.min(limit, list.length); n++) turns.push({ turn: first + n, candidate: list[n]! })
  }
  turns.sort((a, b) => a.turn - b.turn || byAge(a.candidate, b.candidate))
  return turns.slice(0, Math.max(0, Math.floor(limit))).map(({ candidate }) => candidate.id)
}

function byAge(a: AsyncCandidate, b: AsyncCandidate): number {
  return compareText(a.receivedAt, b.receivedAt) || compareText(a.id, b.id)
}

/** `waiting`: the run parked at a callback wait or a long sleep (SPEC §22). */
type AsyncRunStatus = 'queued' | 'running' | 'waiting' | 'success' | 'error'

/** The answer of `GET /api/result/<projectId>/<runId>`, plus the flow (its Start decides the auth). */
export interface AsyncRunState {
  runId: string
  flow: string
  status: AsyncRunStatus
  /** The run's answer once it finished, as a synchronous call would have got it. */
  response: { status: number; body: unknown } | null
}

/** How a finished run is written beside its history record. */
export interface AsyncRunCompletion {
  claimToken: string
  /** JSON text of `{ status, body }`. */
  response: string
}

export interface ClaimOptions {
  /** At most this many runs. */
  limit: number
  /** The claim holds until now + leaseMs unless renewed. */
  leaseMs: number
  /** Written on the claimed rows; finishing and renewing need it. */
  token: string
}
// Leases are measured on the database's clock where there is one (PostgreSQL's now()), so
// instances with skewed clocks agree on when a lease ran out; SQLite is one machine's file.

/** Finished rows are kept this long for `GET /api/result`, then pruned when claims find nothing older to do. */
export const ASYNC_RESULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000

/** Thrown by the queue's `finish` when the claim is no longer this worker's: nothing was written. */
export class AsyncClaimLost extends Error {
  readonly code = 'ASYNC_CLAIM_LOST'
  constructor(runId: string) {
    super(`async run ${runId} is no longer claimed by this worker (its lease ran out and another worker took it, or it is already recorded)`)
    this.name = 'AsyncClaimLost'
  }
}

export function isAsyncClaimLost(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ASYNC_CLAIM_LOST'
}
