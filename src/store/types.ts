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
  /** The run this one replayed (SPEC §14), or null. */
  replayOf: string | null
  // scheduledFor (SPEC §14, the minute of a scheduled run) belongs here; issue 18 adds it with migration 3.
}

/** What a run keeps beside its record when `history.keep` says so (SPEC §14). */
export interface RunDetails {
  /** The validated inputs `{ body, path, query, headers }` (declared headers only), secrets as `***`. */
  input: StoredInput | null
  /** The steps of the run, outputs capped by `limits.traceBytes`. */
  trace: StoredTrace | null
}

export interface StoredInput {
  body?: unknown
  path: Record<string, unknown>
  query: Record<string, unknown>
  headers: Record<string, unknown>
}

/** One step of a run: the node, the port it took, its time and its output (secrets as `***`). */
export interface StoredTraceStep {
  nodeId: string
  type: string
  name: string
  /** The port taken, or null for nodes that end the run. */
  port: string | null
  durationMs: number
  output: unknown
}

export interface StoredTrace {
  runId: string
  durationMs: number
  steps: StoredTraceStep[]
  /** True when outputs were cut at `limits.traceBytes`. */
  cut: boolean
}

/** A record with its details, as `history show` and `/runs/<projectId>/<runId>` read it. */
export type StoredRun = RunRecord & RunDetails

/** Details as JSON text, made once by the engine (the stores write the text as it is). */
export interface RunDetailsText {
  input: string | null
  trace: string | null
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

  /**
   * Writes the run durably (committed before the promise resolves) and trims history to `historyCap`.
   * `details` are the stored input and trace, when `history.keep` keeps them for this run.
   */
  recordRun(run: RunRecord, historyCap: number, details?: RunDetailsText): Promise<void>
  /** Records without input and trace: lists stay cheap however big the traces are. */
  listRuns(query: RunQuery): Promise<RunRecord[]>
  /** One record with its input and trace (null when not kept). */
  getRun(projectId: string, id: string): Promise<StoredRun | null>
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
