// `POST /api/replay/<projectId>/<runId>` (SPEC §14): the recorded input of a run through the flow's
// current version, for a loopback caller or a signed-in editor or owner. The answer has the shape
// of `?_trace=1` with `replayOf`: `{ runId, replayOf, response: { status, body }, trace }` with the
// run's status, or `{ ok: false, errors, nodeId, runId, replayOf, trace }` (500) when a node failed.
// `?from=failed` (SPEC §22) retries from the failed step instead; the answer adds `resumedFrom`.
import { getQuery, getRouterParam, type H3Event } from 'h3'
import { httpError } from '../../errors.js'
import { isReplayRefusal, replayRun } from '../../flow/replay.js'
import { isCrossSite, requireAccess } from '../access.js'
import type { AppContext } from '../context.js'
import { jsonResponse } from '../respond.js'
import { logRejected } from './pages.js'

export function replayHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const access = await requireAccess(context, event, projectId, 'run')
    if (isCrossSite(event)) throw httpError('FORBIDDEN', ['cross-site request refused'])
    const { project } = access.entry
    const store = await context.workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    const runId = getRouterParam(event, 'runId') ?? ''
    const from = replayFrom(getQuery(event).from)
    try {
      const { flow, outcome } = await replayRun({ project, store, runId, trigger: 'http', trace: true, signal: context.options.signal, from })
      if (outcome.kind === 'invalid') {
        logRejected(context, projectId, flow.slug, outcome.errors)
        throw httpError('INPUT_INVALID', outcome.errors, { fields: { replayOf: runId } })
      }
      const headers = { 'x-run-id': outcome.runId, 'cache-control': 'no-store' }
      const resumed = from ? { resumedFrom: outcome.record.resumedFrom } : {}
      if (outcome.kind === 'failed') {
        return jsonResponse(
          500,
          {
            ok: false,
            errors: [`node ${outcome.nodeId} failed`],
            nodeId: outcome.nodeId,
            runId: outcome.runId,
            replayOf: runId,
            ...resumed,
            trace: outcome.trace ?? null,
          },
          headers,
        )
      }
      // A 204/304 cannot carry a body, so the answer of a run without one is 200, as with `_trace`.
      const status = outcome.status === 204 || outcome.status === 205 || outcome.status === 304 ? 200 : outcome.status
      return jsonResponse(
        status,
        { runId: outcome.runId, replayOf: runId, ...resumed, response: { status: outcome.status, body: outcome.body ?? null }, trace: outcome.trace ?? null },
        headers,
      )
    } catch (error) {
      // Why a run cannot be replayed (no such run, its flow removed, no input kept) is told as it is.
      if (isReplayRefusal(error)) throw httpError(error.code, [error.message], { cause: error })
      throw error
    }
  }
}

/** `?from=failed` retries from the failed step; no `from` replays the whole run; anything else is a 400. */
function replayFrom(value: unknown): 'failed' | undefined {
  if (value === undefined) return undefined
  if (value === 'failed') return 'failed'
  throw httpError('BAD_REQUEST', ['from: must be "failed" (or left out to replay the whole run)'])
}
