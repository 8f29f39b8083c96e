// The contract of `runFlow` (src/flow/engine.ts), the one engine every trigger calls:
// the Run API, `flowctl run` and the scheduler.
import type { BodyType, Flow, FlowNode, Project } from './project.js'
import type { RunDetailsText, RunDocument, RunRecord, RunTrigger, Store, StoredTraceStep, WaitStore } from './store.js'

/** Raw inputs as they arrive; the engine validates and coerces them against the Start's schemas. */
export interface RunInput {
  body?: unknown
  /** How the body arrived: `form` fields are text, coerced like query values; `text` is start.body.
   *  Default: `text` when the Start accepts only text, else `json`. */
  bodyType?: BodyType
  path?: Record<string, string>
  query?: Record<string, string | string[]>
  /** Header names in lower case. */
  headers?: Record<string, string>
}

export interface RunOptions {
  project: Project
  flow: Flow
  store: Store
  trigger: RunTrigger
  /** Upper-case HTTP method, `CRON` or `CLI`. */
  method: string
  input: RunInput
  /** Collect a trace of every step. */
  trace?: boolean
  /** Injectable clock (tests). */
  now?: () => Date
  /** Scheduled runs: the minute (ISO) the run is for; `run.scheduledFor` in templates, null otherwise. */
  scheduledFor?: string
  /** Aborts the run (server shutdown); the per-run timeout is applied by the engine itself. */
  signal?: AbortSignal
  /** Sends the requests of http nodes, sub-flows' included (default: the global fetch). `flowctl test`
   *  answers them from mocks so tests never reach the network (SPEC §15). */
  fetch?: NodeFetch
  /** How the run waits (retry delays, `wait` nodes); default: real timers. `flowctl test` passes one
   *  that returns at once, as test runners' fake timers do, so a case never sleeps. */
  sleep?: RunSleep
  /** The caller's W3C `traceparent` (Run API): the run's span becomes its child (SPEC §23). */
  traceparent?: string
  /** The run this one replays (`flowctl run --replay`, `/api/replay`): recorded as `replayOf`. */
  replayOf?: string
  /** A retry from the failed step (`resume-from.ts`): outputs reused, and the node to execute from. */
  resume?: ResumePoint
  /** The run's id when it was chosen before the run (an async run's id is in its 202); default a new one. */
  runId?: string
  /** The ids of the run's inserts (default: a new document id each). */
  insertIds?: InsertIds
  /**
   * Writes the finished run instead of `store.history.recordRun` (async runs write the record and their
   * queue row's completion in one transaction). `response` is the answer a caller would get;
   * `documents` the run's inserts, to commit in the same transaction as the record.
   */
  /** The run may park at a long wait (SPEC §22): its caller has its answer already (async and scheduled runs). */
  parking?: RunParking
  recordRun?: (record: RunRecord, details: RunDetailsText | undefined, response: RunResponse, documents: readonly RunDocument[]) => Promise<void>
}

/**
 * Where a retry from the failed step starts: the Start runs on the recorded input, then the failed
 * run's completed steps are put in place (their stored outputs, not executed again) and the walk
 * goes on at `nodeId`. Checked against the flow's current version before the run (`resume-from.ts`).
 */
export interface ResumePoint {
  /** The failed node of the original run, executed first. */
  nodeId: string
  /** The original run's completed steps before it, in order (the Start's is left out: it runs again). */
  steps: readonly StoredTraceStep[]
  /** The original record's `ports`: the If, Switch and error branches those steps took. */
  ports: RunRecord['ports']
}

/**
 * Ids for a run's inserts chosen by its caller: an async run's are made from its run id, so a run
 * taken over after its worker died inserts the same ids again.
 */
export interface InsertIds {
  /** The id of the run's next insert into `collection`. */
  next(collection: string): string
  /** Keep a document already stored under such an id instead of failing (RunDocument.keepExisting). */
  keepExisting: boolean
}

/** What a finished run answers: an End's status and body, 204 without one, or the failure answer. */
export interface RunResponse {
  status: number
  body: unknown
}

/** Waits `ms` (or until `signal` aborts, rejecting then). */
export type RunSleep = (ms: number, signal: AbortSignal) => Promise<void>

/** fetch, told which http node is asking. */
export type NodeFetch = (url: URL, init: RequestInit & { signal: AbortSignal }, node: FlowNode) => Promise<FetchAnswer>

/** What an http node reads of an answer: a fetch Response has all of it. `flowctl test`'s mocks
 *  build only this, since the first `new Response`/`new Headers` loads Node's fetch (undici, ~40 ms). */
export interface FetchAnswer {
  status: number
  statusText: string
  /** Lower-case names; iterated sorted by name, as `Headers` is. */
  headers: { get(name: string): string | null } & Iterable<[string, string]>
  text(): Promise<string>
  /** The body as a stream (fetch's Response); the http node reads it with its byte cap. Mocks leave it out. */
  body?: ReadableStream<Uint8Array> | null
}

/** One step of a trace (the same shape is stored in history, see StoredTraceStep). */
export type TraceStep = StoredTraceStep

export interface Trace {
  runId: string
  durationMs: number
  steps: TraceStep[]
}

export type RunOutcome =
  /** Inputs failed validation: not a run, nothing recorded. One string per problem (`body/qty: must be >= 1`). */
  | { kind: 'invalid'; errors: string[] }
  /** Finished: an End node's response, or 204 with `body` undefined when no End was reached. */
  | {
      kind: 'response'
      runId: string
      status: number
      body: unknown
      headers: Record<string, string>
      trace?: Trace
      record: RunRecord
    }
  /** A node failed or the run timed out; `error` is the reason, secrets masked. */
  | { kind: 'failed'; runId: string; nodeId: string | null; error: string; trace?: Trace; record: RunRecord }

/** What lets a run park: the caller answered already (an async run, a scheduled run, a resumed run). */
export interface RunParking {
  store: WaitStore
  /** The project's resume key (WaitStore.resumeKey), read before the run starts. */
  key: string
  /** Where resume URLs point: the server's public origin, or '' for a path alone. */
  origin: string
  /** A resumed run: its claim (parking again moves the same row). */
  claimToken?: string
  /** An async run: its queue row's claim, moved to `waiting` with the park. */
  asyncClaimToken?: string
}
