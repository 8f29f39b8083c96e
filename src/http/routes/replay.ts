// `POST /api/replay/<projectId>/<runId>` (SPEC §14): the recorded input of a run through the flow's
// current version, for a loopback caller or a signed-in editor or owner. The answer has the shape
// of `?_trace=1` with `replayOf`: `{ runId, replayOf, response: { status, body }, trace }` with the
// run's status, or `{ ok: false, errors, nodeId, runId, replayOf, trace }` (500) when a node failed.
import { getRouterParam, type H3Event } from 'h3'
import { isFlowctlError } from '../../errors.js'
import { replayRun } from '../../flow/replay.js'
import { accessResponse, isCrossSite, projectAccess } from '../access.js'
import type { AppContext } from '../context.js'
import { errorResponse, jsonResponse, STORE_UNAVAILABLE } from '../respond.js'
import { logRejected } from './pages.js'

export function replayHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const access = await projectAccess(context, event, projectId, 'run')
    if (!access.ok) return accessResponse(access)
    if (isCrossSite(event)) {
      context.rejections.count(projectId, 403)
      return errorResponse(403, ['cross-site request refused'])
    }
    const { project } = access.entry
    const store = await context.workspace.storeFor(projectId)
    if (!store) return errorResponse(503, [STORE_UNAVAILABLE])
    const runId = getRouterParam(event, 'runId') ?? ''
    try {
      const { flow, outcome } = await replayRun({ project, store, runId, trigger: 'http', trace: true, signal: context.options.signal })
      if (outcome.kind === 'invalid') {
        context.rejections.count(projectId, 400)
        logRejected(context, projectId, flow.slug, outcome.errors)
        return errorResponse(400, outcome.errors, {}, { replayOf: runId })
      }
      const headers = { 'x-run-id': outcome.runId, 'cache-control': 'no-store' }
      if (outcome.kind === 'failed') {
        return jsonResponse(500, { ok: false, errors: [`node ${outcome.nodeId} failed`], nodeId: outcome.nodeId, runId: outcome.runId, replayOf: runId, trace: outcome.trace ?? null }, headers)
      }
      // A 204/304 cannot carry a body, so the answer of a run without one is 200, as with `_trace`.
      const status = outcome.status === 204 || outcome.status === 205 || outcome.status === 304 ? 200 : outcome.status
      return jsonResponse(status, { runId: outcome.runId, replayOf: runId, response: { status: outcome.status, body: outcome.body ?? null }, trace: outcome.trace ?? null }, headers)
    } catch (error) {
      if (isFlowctlError(error)) {
        context.rejections.count(projectId, error.httpStatus)
        return errorResponse(error.httpStatus, [error.message])
      }
      throw error
    }
  }
}
