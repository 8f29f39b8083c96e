// The last step of the Run API: the engine, inside the guards. A sync Start runs now and its
// outcome is answered by `answerOutcome` (src/flow/answer.ts; 400 for invalid input, thrown as a
// refusal); an async Start (`respond: async`) validates and queues the run instead, answering 202
// (async-accept.ts). The history record is committed before the answer (SPEC §5.1): a record the
// store refuses is a 503, never an answer as if it had been recorded.
import type { H3Event } from 'h3'
import { FlowctlError, hasErrorCode } from '../../errors.js'
import { answerOutcome } from '../../flow/answer.js'
import { runFlow } from '../../flow/engine.js'
import type { RunOptions, RunOutcome } from '../../model/run.js'
import type { Store } from '../../model/store.js'
import { acceptAsyncRun } from '../async-accept.js'
import type { AppContext } from '../context.js'
import { logRejected } from '../run-log.js'
import { noteStoreBack, noteStoreOutage } from '../store-outage.js'
import { sendOutcome } from './answer.js'
import { enterGuards } from './guards.js'
import type { RunCall } from './input.js'

export async function runNow(context: AppContext, event: H3Event, call: RunCall): Promise<Response | string> {
  const startedAt = performance.now()
  const guarded = await enterGuards(context, event, call)
  if (guarded.kind === 'replay') return guarded.response
  const { guards } = guarded
  const { project, flow } = call.target
  const projectId = project.settings.projectId
  let outcome: RunOutcome
  try {
    const recordRun = recordHistory(call.store, project.settings.limits.historyRuns)
    const traceparent = event.req.headers.get('traceparent') ?? undefined
    const { store, method, input, trace } = call
    outcome = await runFlow({ project, flow, store, trigger: 'http', method, input, trace, signal: context.options.signal, recordRun, traceparent })
  } catch (error) {
    await guards.release()
    // The run could not be recorded (STORE_UNAVAILABLE, see recordHistory): onError answers 503.
    if (hasErrorCode(error, 'STORE_UNAVAILABLE')) noteStoreOutage(context, project, error)
    throw error
  }
  noteStoreBack(context, projectId, startedAt)
  const answer = answerOutcome(outcome, { trace: call.trace, secrets: project.secrets })
  if (outcome.kind === 'invalid') {
    await guards.release()
    logRejected(context, projectId, flow.slug, outcome.errors)
    throw answer.error!
  }
  return guards.settle(event, sendOutcome(event, answer, call.cors.answer), outcome.kind === 'failed')
}

/** An async Start: an idempotency key replays the 202 of the first request (same run id). */
export async function queueRun(context: AppContext, event: H3Event, call: RunCall): Promise<string | Response> {
  const guarded = await enterGuards(context, event, call)
  if (guarded.kind === 'replay') return guarded.response
  const { project, flow } = call.target
  let answer: string
  try {
    answer = await acceptAsyncRun(context, event, { project, flow, store: call.store, method: call.method, input: call.input, cors: call.cors.answer })
  } catch (error) {
    // No 202 (invalid input, store down): the key is freed, so the sender's retry is taken again.
    await guarded.guards.release()
    throw error
  }
  return guarded.guards.settle(event, answer, false)
}

/**
 * The history write of a Run API call. Whatever the store throws (a closed SQLite database throws a
 * TypeError, not STORE_UNAVAILABLE), the run was not recorded, so it is answered 503, never sent as
 * if it had been (SPEC §5.1: a run whose response was sent is in history).
 */
function recordHistory(store: Store, historyCap: number): NonNullable<RunOptions['recordRun']> {
  return async (record, details, _response, documents) => {
    try {
      // The run's inserted documents commit with its record (one commit per run).
      await store.history.recordRun(record, historyCap, details, documents)
    } catch (error) {
      if (hasErrorCode(error, 'STORE_UNAVAILABLE')) throw error
      throw new FlowctlError('STORE_UNAVAILABLE', `the run could not be recorded: ${(error as Error).message}`, { cause: error })
    }
  }
}
