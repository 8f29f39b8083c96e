// The answer a caller gets for a run's outcome, one function for every caller: the Run API, replay
// (HTTP and `flowctl run --replay`), the run form, `flowctl run`, `flowctl test` and the stored
// response of an async run (SPEC §5.1, §12, §13). A failed run is a NODE_FAILED (or RUN_TIMEOUT)
// catalog error carrying its node and run ids; refused input an INPUT_INVALID; every error body is
// `{ ok: false, errors, ...fields }` (errorBody, which the server's error answers use too).
import { FlowctlError, httpError } from '../errors.js'
import type { Secrets } from '../model/project.js'
import type { RunOutcome, RunResponse } from '../model/run.js'
import { maskValue } from './mask.js'
import { capErrorList } from './reason.js'

export interface OutcomeAnswer {
  status: number
  /** `X-Run-Id` and, for a plain answer, the End's headers (transport ones left out). */
  headers: Record<string, string>
  /** The body: JSON, or a string sent as it is when `text`; undefined: no body (204, 205, 304 or no End). */
  body: unknown
  /** The End set a content type that is not JSON: a string body is sent as text. */
  text: boolean
  /** The failure or refusal (NODE_FAILED, RUN_TIMEOUT, INPUT_INVALID); undefined for an End's answer. */
  error?: FlowctlError
}

export interface AnswerView {
  /** The `?_trace=1` shape: `{ response: { status, body }, trace }`; a failure's body gains `trace`. */
  trace?: boolean
  /** A replay: `runId` and `replayOf` lead the trace shape, and follow the ids of an error body. */
  replayOf?: string
  /** A retry from the failed step (`?from=failed`): the node it resumed from, after `replayOf`. */
  resumedFrom?: string | null
  /** Masked in the copy of the response body a trace answer carries. */
  secrets?: Secrets
}

/** Headers an End node may not set: they describe the transport, not the response. */
const TRANSPORT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade'])

export function answerOutcome(outcome: RunOutcome, view: AnswerView = {}): OutcomeAnswer {
  if (outcome.kind === 'invalid') {
    const error = httpError('INPUT_INVALID', outcome.errors, view.replayOf === undefined ? {} : { fields: { replayOf: view.replayOf } })
    return { status: error.httpStatus, headers: {}, body: errorBody(error), text: false, error }
  }
  if (outcome.kind === 'failed') {
    const error = runFailedError(outcome, view)
    return { status: error.httpStatus, headers: { 'x-run-id': outcome.runId }, body: errorBody(error), text: false, error }
  }
  if (view.trace || view.replayOf !== undefined) {
    // A 204/304 cannot carry a body, so the trace of a run without a response body answers 200.
    const status = isNullBodyStatus(outcome.status) ? 200 : outcome.status
    // Secrets are `***` everywhere in a trace answer, its copy of the response body included (SPEC §5.1).
    const copy = view.secrets ? maskValue(outcome.body ?? null, view.secrets) : (outcome.body ?? null)
    const shape = { response: { status: outcome.status, body: copy }, trace: outcome.trace ?? null }
    const resumed = view.resumedFrom === undefined ? undefined : { resumedFrom: view.resumedFrom }
    const body = view.replayOf === undefined ? shape : { runId: outcome.runId, replayOf: view.replayOf, ...resumed, ...shape }
    return { status, headers: { 'x-run-id': outcome.runId }, body, text: false }
  }
  const body = isNullBodyStatus(outcome.status) ? undefined : outcome.body
  return { status: outcome.status, headers: endHeaders(outcome.headers, outcome.runId), body, text: nonJsonContentType(outcome.headers) !== null }
}

/**
 * A failed run as a catalog error: `errors` is the public line (`node <id> failed`), the node and
 * run ids are fields; the message adds the reason (secrets already masked) for the CLI and pages.
 */
function runFailedError(outcome: Extract<RunOutcome, { kind: 'failed' }>, view: AnswerView = {}): FlowctlError {
  const line = outcome.nodeId ? `node ${outcome.nodeId} failed` : `flow ${outcome.record.flow} failed`
  const fields: Record<string, unknown> = { nodeId: outcome.nodeId, runId: outcome.runId }
  if (view.replayOf !== undefined) fields.replayOf = view.replayOf
  if (view.resumedFrom !== undefined) fields.resumedFrom = view.resumedFrom
  if (view.trace || view.replayOf !== undefined) fields.trace = outcome.trace ?? null
  return new FlowctlError(outcome.error === 'timeout' ? 'RUN_TIMEOUT' : 'NODE_FAILED', `${line}: ${outcome.error}`, { errors: [line], fields })
}

/** `{ ok: false, errors, ...fields }` with at most 20 errors, then "… and N more" (SPEC §17). */
export function errorBody(error: FlowctlError): Record<string, unknown> {
  const errors = capErrorList(error.errors)
  return error.fields ? { ok: false, errors, ...error.fields } : { ok: false, errors }
}

/** What a caller was answered, as an async run's result and an idempotent replay keep it. */
export function runResponse(outcome: RunOutcome): RunResponse {
  const answer = answerOutcome(outcome)
  return { status: answer.status, body: answer.body ?? null }
}

function isNullBodyStatus(status: number): boolean {
  return status === 204 || status === 205 || status === 304
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i

/** `application/json`, `application/problem+json` … (parameters ignored). */
export function isJsonContentType(header: string | null): boolean {
  if (!header) return false
  const semicolon = header.indexOf(';')
  return JSON_TYPE.test((semicolon < 0 ? header : header.slice(0, semicolon)).trim())
}

/** The End's content-type when it sets one that is not JSON; null otherwise. */
function nonJsonContentType(headers: Record<string, string> | undefined): string | null {
  if (!headers) return null
  for (const name in headers) {
    if (name.length === 12 && name.toLowerCase() === 'content-type') {
      const value = headers[name]!
      return value === '' || isJsonContentType(value) ? null : value
    }
  }
  return null
}

/** The End's headers without transport ones, then `x-run-id`. Most Ends set none. */
function endHeaders(headers: Record<string, string> | undefined, runId: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (headers) {
    for (const name in headers) if (!TRANSPORT_HEADERS.has(name.toLowerCase())) out[name] = String(headers[name])
  }
  out['x-run-id'] = runId
  return out
}
