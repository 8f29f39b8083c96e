// Parked runs (SPEC §22): runs stopped at a `wait` that outlasts a request — a callback wait, or a
// sleep longer than `limits.inlineWaitMs` — kept in the store until they are resumed. Both stores
// implement `WaitStore` (sqlite-waits.ts, postgres-waits.ts) and pass one contract suite.
//
// A row's life: `waiting` (parked; `dueAt` is the callback's timeout or the sleep's end) →
// `ready` (a callback arrived: its payload is stored, nobody runs it yet) → `running` (claimed by
// one instance, with a token and a lease) → `done`, written in the SAME transaction as the run's
// final history record; or back to `waiting` when the resumed run parks again at a later wait.
// A claim takes `ready` rows, `waiting` rows past `dueAt` (a timeout or a finished sleep) and
// `running` rows whose lease ran out (their instance died); finishing with a stale token writes
// nothing, so a run finishes exactly once.

export type WaitKind = 'callback' | 'sleep'
type ParkedStatus = 'waiting' | 'ready' | 'running' | 'done'
/** Which port the wait leaves by: `out` (a callback arrived, a sleep ended) or `timeout`. */
export type WakePort = 'out' | 'timeout'

/** A run to park (first park), or a resumed run parking again (with its claim token). */
export interface ParkedRunWrite {
  id: string
  projectId: string
  flow: string
  kind: WaitKind
  /** Epoch ms: the callback's timeout, or when the sleep ends. */
  dueAt: number
  /** The run's parked state as JSON text (src/flow/park.ts), secrets masked. */
  state: string
  /** How many times the run has parked, this time included: the resume token is made from it. */
  seq: number
  /** A resumed run parking again: the claim it holds. */
  claimToken?: string
  /** An async run parking: its queue row goes from `running` (claimed with this token) to `waiting`. */
  asyncClaimToken?: string
}

/** A parked run claimed to be resumed. */
export interface ClaimedParkedRun {
  id: string
  projectId: string
  flow: string
  kind: WaitKind
  state: string
  port: WakePort
  /** The callback's `{ body, receivedAt }` as JSON text; null for sleeps and timeouts. */
  payload: string | null
  seq: number
  claimToken: string
}

/** What the resume route knows of a parked run. */
export interface ParkedRunInfo {
  id: string
  flow: string
  kind: WaitKind
  status: ParkedStatus
  /** Epoch ms. */
  dueAt: number
  seq: number
  /** Set once claimed or delivered: how the wait ended. */
  port: WakePort | null
}

/** What delivering a callback did: `delivered`, or why not (the run ended, timed out, or never parked here). */
export type DeliverResult = 'delivered' | 'already' | 'expired' | 'missing'

/** Thrown by park and finish when the claim is no longer this worker's: nothing was written. */
export class ParkClaimLost extends Error {
  readonly code = 'PARK_CLAIM_LOST'
  constructor(runId: string) {
    super(`parked run ${runId} is no longer claimed by this worker (its lease ran out and another worker took it)`)
    this.name = 'ParkClaimLost'
  }
}

export function isParkClaimLost(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'PARK_CLAIM_LOST'
}

/** Finished rows are kept this long (a late second POST still gets 409 rather than 401), then pruned. */
export const PARKED_RETENTION_MS = 30 * 24 * 60 * 60 * 1000
