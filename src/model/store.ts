// The store, seen through its ports: run history, documents (SPEC §10), schedules (claims, the
// scheduler heartbeat, notification cursors and outbox), guards (SPEC §12) and the async-run queue.
// `openStore()` gives a `Store` whose properties are the ports; SQLite (src/store/sqlite/) and
// PostgreSQL (src/store/postgres/) implement each port in a file of its own and pass one contract
// suite per port (test/store/). Every method is async so both fit the same shape.

import type { AsyncRunCompletion, AsyncRunState, ClaimedAsyncRun, ClaimOptions, NewAsyncRun } from './async-runs.js'
import type { FieldPath, FilterNode, SortKey } from './document-filter.js'
import type { GuardStore } from './guard-types.js'
import type { ClaimedParkedRun, DeliverResult, ParkedRunInfo, ParkedRunWrite } from './waits.js'

export type RunTrigger = 'http' | 'cron' | 'cli'
/** `skipped`: a scheduled run not started because its flow was at its concurrency limit (SPEC §12).
 *  `waiting`: a run parked at a callback wait or a long sleep (SPEC §22), not finished yet. */
export type RunStatus = 'success' | 'error' | 'skipped' | 'waiting'

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
  /** The run this one replayed (SPEC §14), or null. */
  replayOf: string | null
  /** A retry from the failed step: the node it executed from (the failed node of `replayOf`), or null. */
  resumedFrom: string | null
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
  /** How a non-JSON body arrived (`form` fields as validated, or `text`); absent for JSON. */
  bodyType?: 'form' | 'text'
  /** Present when the input was longer than `limits.storedInputBytes`: `body` is then a prefix of
   *  its JSON ending with a marker, and the run cannot be replayed (SPEC §18). */
  cut?: true
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
  /** With `retry`: which attempt this step is (each attempt is a step). */
  attempt?: number
  /** Call and each nodes: the steps of each sub-flow run, in call order. */
  calls?: { flow: string; steps: StoredTraceStep[] }[]
  /** A retry from the failed step: this step was not executed; its output is the failed run's. */
  reused?: true
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
  /** Only replays of this run (the run page links a run to its replays, SPEC §21). */
  replayOf?: string
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

/** A `find`: a bound filter (values resolved), sort keys, and a page. */
export interface DocumentQuery {
  filter: FilterNode
  sort?: readonly SortKey[]
  limit: number
  skip?: number
  /** Order of documents the sort keys leave tied (or with no sort): newest or oldest first (default). */
  newestFirst?: boolean
}

/** An `update`: top-level fields to set (merged into the document) and fields to remove. */
export interface DocumentChange {
  set: Record<string, unknown>
  unset: readonly string[]
}

/**
 * A document a run inserted. The insert node has its id at once; the row commits with the run's
 * record (one transaction per run), or earlier when a later node of the run reads documents.
 */
export interface RunDocument {
  collection: string
  id: string
  document: unknown
  /**
   * Keep a document already stored under this id instead of failing: an async run taken over after
   * its worker died inserts again, with the same ids, what that worker may have committed.
   */
  keepExisting: boolean
}

/** Expression indexes declared in flowctl.yaml: field paths per collection. */
export type DocumentIndexes = Record<string, readonly FieldPath[]>

/** Called once a run's record committed (with the run's documents written in that commit). */
export type RecordedListener = (run: RunRecord, documents: readonly RunDocument[]) => void

/** Run history: where a run's record is written and read (SPEC §4, §14). */
export interface HistoryPort {
  /**
   * Writes the run durably (committed before the promise resolves) and trims history to `historyCap`.
   * `details` are the stored input and trace, when `history.keep` keeps them for this run;
   * `documents` the run's inserts not committed yet, written in the same transaction as the record
   * (all or nothing: a document that cannot be written fails the whole run's write).
   */
  recordRun(run: RunRecord, historyCap: number, details?: RunDetailsText, documents?: readonly RunDocument[]): Promise<void>
  /** Records without input and trace: lists stay cheap however big the traces are. */
  listRuns(query: RunQuery): Promise<RunRecord[]>
  /** One record with its input and trace (null when not kept). */
  getRun(projectId: string, id: string): Promise<StoredRun | null>
  /** Counts of runs by status since `after` (all runs when null), for digests. */
  countRuns(projectId: string, flows: string[] | null, after: string | null): Promise<{ success: number; error: number }>
  /**
   * Calls `listener` after each record this store commits (`recordRun` and the queue's `finish`):
   * synchronously, after the commit, before the recorder's promise resolves. A listener that throws
   * is logged and never fails the run. Returns the function that unsubscribes it.
   */
  onRecorded(listener: RecordedListener): () => void
}

/** Stored documents (SPEC §10): what insert, get, find, update and delete nodes use. */
export interface DocumentsPort {
  /**
   * Stores a document and returns its string id: a new one, or `id` when given (test cases seed
   * documents with the ids their inputs name; the caller keeps it unique, it is the primary key).
   */
  insert(projectId: string, collection: string, document: unknown, id?: string): Promise<string>
  /** Commits a run's pending inserts ahead of its record, in one transaction (a node of the run reads after writing). */
  insertRunDocuments(projectId: string, documents: readonly RunDocument[]): Promise<void>
  /** The document with `_id` (its id) first; null when there is none. Non-object documents come back as stored. */
  get(projectId: string, collection: string, id: string): Promise<unknown | null>
  /** One page of the matching documents (each with `_id`) and the count of all matches. */
  find(projectId: string, collection: string, query: DocumentQuery): Promise<{ documents: unknown[]; count: number }>
  /** Changes the matching object documents; `modified` counts those whose content changed. */
  update(projectId: string, collection: string, filter: FilterNode, change: DocumentChange): Promise<{ matched: number; modified: number }>
  /** Deletes the matching documents and returns how many. */
  delete(projectId: string, collection: string, filter: FilterNode): Promise<number>
  /** The project's collections with their document counts, by name. */
  listCollections(projectId: string): Promise<{ collection: string; count: number }[]>
  /** Creates the expression indexes that do not exist yet (idempotent, safe to run from several processes). */
  ensureIndexes(indexes: DocumentIndexes): Promise<void>
}

/** What the scheduler keeps (SPEC §5.3, §16): minute claims, its heartbeat, notification cursors and the outbox. */
export interface SchedulesPort {
  /**
   * Takes the claim for one schedule and minute (`minute` is ISO, floored to the minute).
   * True for exactly one caller across every process sharing the store.
   */
  claimMinute(projectId: string, scheduleId: string, minute: string): Promise<boolean>
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
}

/** The durable queue of async runs (SPEC §12, async-runs.ts). */
export interface QueuePort {
  /** Commits a queued run (resolves once committed; the 202 is sent after). */
  enqueue(run: NewAsyncRun): Promise<void>
  /**
   * Claims queued runs, and runs whose lease ran out: round-robin across flows, oldest first within a
   * flow (pickFairly, SPEC §18); each row goes to one caller only.
   */
  claim(projectId: string, options: ClaimOptions): Promise<ClaimedAsyncRun[]>
  /** Extends to now + leaseMs the lease of every running row claimed with one of `tokens`. */
  renewClaims(tokens: string[], leaseMs: number): Promise<void>
  /**
   * Writes the run's history record and its pending `documents`, and marks its queue row finished,
   * in one transaction (history's `onRecorded` listeners are called after it). Rejects with
   * AsyncClaimLost (writing nothing) when the row is not claimed with this token any more, or the
   * run is already recorded.
   */
  finish(
    run: RunRecord,
    historyCap: number,
    details: RunDetailsText | undefined,
    completion: AsyncRunCompletion,
    documents?: readonly RunDocument[],
  ): Promise<void>
  /** Puts a claimed run back in the queue (shutdown before it finished). */
  release(id: string, token: string): Promise<void>
  /** The run's state for the result route; null when no such run was queued (or it was pruned). */
  get(projectId: string, id: string): Promise<AsyncRunState | null>
  /** How many of the project's async runs wait in the queue (status queued): `flowctl_async_queue_depth`. */
  countQueued(projectId: string): Promise<number>
}

/** An open store: one property per port. */
export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  readonly history: HistoryPort
  readonly documents: DocumentsPort
  readonly schedules: SchedulesPort
  /** Idempotency keys, flow concurrency slots, cluster rate counts and used signatures (SPEC §12, §19). */
  readonly guards: GuardStore
  readonly queue: QueuePort
  /** Parked runs: callback waits and durable sleeps (SPEC §22, waits.ts). */
  readonly waits: WaitStore
  /** Commits the writes already accepted, then closes the connection (pool). */
  close(): Promise<void>
}

/** Parked runs (SPEC §22): the store part both stores implement (src/model/waits.ts tells a row's life). */
export interface WaitStore {
  /** The project's resume key (hex), made on first use and kept in the store, shared by every instance. */
  resumeKey(projectId: string): Promise<string>
  /**
   * Parks a run: the parked row and its `waiting` history record in one transaction (an async run's
   * queue row too). `documents` are its inserts so far. Rejects with ParkClaimLost (writing nothing)
   * when `claimToken` or `asyncClaimToken` no longer holds. Like `recordRun`, it tells history's
   * `onRecorded` listeners of the record, and a first park counts the run under `historyCap` (a
   * trim never deletes a record that is still `waiting`).
   */
  park(run: ParkedRunWrite, record: RunRecord, historyCap: number, details: RunDetailsText | undefined, documents: readonly RunDocument[]): Promise<void>
  /** Stores a callback's payload for a run waiting for one (before its timeout); one caller wins. */
  deliver(projectId: string, id: string, seq: number, payload: string): Promise<DeliverResult>
  /** Claims runs to resume: callbacks delivered, waits past due, and claims whose lease ran out. */
  claimDue(projectId: string, options: { limit: number; leaseMs: number; token: string }): Promise<ClaimedParkedRun[]>
  /**
   * Writes the run's final history record (replacing its `waiting` one) and marks the row done, in
   * one transaction; an async run's queue row gets its response. Rejects with ParkClaimLost when the
   * claim no longer holds.
   */
  finish(record: RunRecord, details: RunDetailsText | undefined, claimToken: string, response: string, documents: readonly RunDocument[]): Promise<void>
  /** The run's parked row, or null when it never parked. */
  lookup(projectId: string, id: string): Promise<ParkedRunInfo | null>
  /** Runs parked and not finished (`flowctl_waiting_runs`). */
  countWaiting(projectId: string): Promise<number>
}
