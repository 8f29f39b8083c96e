// The request and answer of a failed http step (SPEC §21), read back from a stored trace for the run
// page, `flowctl history show` and alerts. The http node puts them beside the reason in its failed
// step's output (`{ error, http: { method, url, status, body } }`); secrets are already `***` there.
import type { StoredTrace, StoredTraceStep } from '../model/store.js'
import { isRecord } from '../internal/is-record.js'

export interface HttpFailure {
  method: string
  /** The URL the node built, secrets shown as `***`. */
  url: string
  /** The answer's status, or null when no answer came (network error, timeout). */
  status: number | null
  /** The first 2 KiB of the answer's body, or null when it was not read. */
  body: string | null
}

/** Where a run failed on an http call: the node (and the sub-flow it is in, when called) and the call. */
export interface FailedHttpStep {
  nodeId: string
  /** The sub-flow the node belongs to, when the run failed inside a `call` or `each`. */
  flow: string | null
  http: HttpFailure
}

/** The http facts of a step's output, when it is a failed http step. */
function httpFailureOf(output: unknown): HttpFailure | null {
  if (!isRecord(output) || typeof output.error !== 'string' || !isRecord(output.http)) return null
  const { method, url, status, body } = output.http
  if (typeof method !== 'string' || typeof url !== 'string') return null
  return { method, url, status: typeof status === 'number' ? status : null, body: typeof body === 'string' ? body : null }
}

/**
 * The failed http call that failed the run: its last step, followed into the sub-flow a failed
 * `call`/`each` step ran, as deep as the failure goes. Null when the run did not fail on an http
 * call, or kept no trace (history.keep) or an output cut at limits.traceBytes.
 */
export function failedHttpOf(trace: StoredTrace | null, failedNodeId: string | null): FailedHttpStep | null {
  if (!trace || failedNodeId === null) return null
  const last = trace.steps.at(-1)
  if (!last || last.nodeId !== failedNodeId || last.port !== null) return null
  return failedHttpIn(last, null)
}

function failedHttpIn(step: StoredTraceStep, flow: string | null): FailedHttpStep | null {
  const http = httpFailureOf(step.output)
  if (http) return { nodeId: step.nodeId, flow, http }
  for (const call of [...(step.calls ?? [])].reverse()) {
    const last = call.steps.at(-1)
    if (last && last.port === null && isRecord(last.output) && typeof last.output.error === 'string') {
      const found = failedHttpIn(last, call.flow)
      if (found) return found
    }
  }
  return null
}

/** One line for people: `POST https://api.example.com/orders answered 503` (or `got no answer`). */
export function describeHttpFailure(http: HttpFailure): string {
  return `${http.method} ${http.url} ${http.status === null ? 'got no answer' : `answered ${http.status}`}`
}
