// The store interface: run history, documents written by `insert`, schedule claims, the scheduler
// heartbeat and notification state. SQLite (sqlite.ts) and PostgreSQL (postgres.ts) implement it and
// pass one contract suite. Every method is async so both fit the same shape.

export type RunTrigger = 'http' | 'cron' | 'cli'
export type RunStatus = 'success' | 'error'

/** Exactly the JSON form of SPEC §4. */
export interface RunRecord {
  id: string
  projectId: string
  /** The flow's slug. */
  flow: string
  trigger: RunTrigger
  /** HTTP method in upper case, `CRON` or `CLI`. */
  method: string
  /** ISO 8601. */
  startedAt: string
  durationMs: number
  status: RunStatus
  httpStatus: number | null
  ports: { nodeId: string; port: string }[]
  failedNodeId: string | null
  error: string | null
  /** For scheduled runs, the minute (ISO) the run is for; null for every other run (SPEC §14, §16). */
  scheduledFor: string | null
}

export interface RunQuery {
  projectId: string
  flow?: string
  status?: RunStatus
  /** Newest first; default 50. */
  limit?: number
  /** Only runs whose startedAt is strictly after this ISO time (cursors of alerts and digests). */
  after?: string
}

export interface Heartbeat {
  projectId: string
  /** ISO time the tick ran (wall clock). */
  at: string
  /** The tick's summary (SPEC §5.3). */
  summary: Record<string, unknown>
}

/** A notification waiting to be delivered, or being delivered. */
export interface OutboxMessage {
  id: string
  projectId: string
  channel: string
  payload: Record<string, unknown>
  attempts: number
  lastError: string | null
  createdAt: string
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres'

  /** Writes the run durably (committed before the promise resolves) and trims history to `historyCap`. */
  recordRun(run: RunRecord, historyCap: number): Promise<void>
  listRuns(query: RunQuery): Promise<RunRecord[]>
  getRun(projectId: string, id: string): Promise<RunRecord | null>
  /** Counts of runs by status since `after` (all runs when null), for digests. */
  countRuns(projectId: string, flows: string[] | null, after: string | null): Promise<{ success: number; error: number }>

  /** Stores a document and returns its string id. */
  insertDocument(projectId: string, collection: string, document: unknown): Promise<string>
  getDocument(projectId: string, collection: string, id: string): Promise<unknown | null>

  /**
   * Takes the claim for one schedule and minute (`minute` is ISO, floored to the minute).
   * True for exactly one caller across every process sharing the store.
   */
  claimScheduleMinute(projectId: string, scheduleId: string, minute: string): Promise<boolean>
  /** The claimed minutes (ISO) of one schedule in [from, to], oldest first; for dry runs, which write nothing. */
  claimedMinutes(projectId: string, scheduleId: string, from: string, to: string): Promise<string[]>

  saveHeartbeat(heartbeat: Heartbeat): Promise<void>
  getHeartbeat(projectId: string): Promise<Heartbeat | null>

  /** The cursor of a notification rule (an ISO time), or null before its first check. */
  getCursor(projectId: string, key: string): Promise<string | null>
  /**
   * Compare-and-set of a rule's cursor from `expected` to `next`, enqueueing `message` in the same
   * transaction. False (and nothing written) when another tick moved the cursor first.
   */
  advanceCursor(
    projectId: string,
    key: string,
    expected: string | null,
    next: string,
    message: { channel: string; payload: Record<string, unknown> } | null,
  ): Promise<boolean>
  /** Leases undelivered messages (not leased, or lease expired) to this caller for `leaseMs`. */
  leaseOutbox(projectId: string, leaseMs: number, now: Date): Promise<OutboxMessage[]>
  markDelivered(id: string): Promise<void>
  /** Records a failed attempt and frees the message for the next tick. */
  markFailed(id: string, error: string): Promise<void>

  close(): Promise<void>
}
