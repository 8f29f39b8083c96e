// `GET /api/result/<projectId>/<runId>` (SPEC §12): the state of an async run, behind the same auth
// as the Start of the run's flow: `{ runId, status: queued|running|success|error, response }`, with
// `response` `{ status, body }` (what a synchronous call would have answered) once it finished.
// Checks: unknown project or run 404, store 503, then the flow's auth 401.
import { getRouterParam, type H3Event } from 'h3'
import { checkRunAuth } from '../auth.js'
import { corsHeaders, flowCors } from '../cors.js'
import type { AppContext } from '../context.js'
import { FLOW_NOT_FOUND, INVALID_TOKEN, sendError, sendJson, STORE_UNAVAILABLE } from '../respond.js'

export const RUN_NOT_FOUND = 'run not found'

export function resultHandler(context: AppContext) {
  const { workspace, rejections } = context
  return async (event: H3Event): Promise<string> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const runId = getRouterParam(event, 'runId') ?? ''
    const entry = workspace.get(projectId)
    if (!entry) {
      rejections.count(null, 404)
      return sendError(event, 404, [RUN_NOT_FOUND])
    }
    const store = await workspace.storeFor(projectId)
    if (!store) return sendError(event, 503, [STORE_UNAVAILABLE])
    let state
    try {
      state = await store.getAsyncRun(projectId, runId)
    } catch (error) {
      if ((error as { code?: unknown }).code === 'STORE_UNAVAILABLE') return sendError(event, 503, [STORE_UNAVAILABLE])
      throw error
    }
    if (!state) {
      rejections.count(projectId, 404)
      return sendError(event, 404, [RUN_NOT_FOUND])
    }
    const { project } = entry
    // The flow's Start decides who may read; a flow removed since has none, so nobody may (fail closed).
    const start = project.flows.get(state.flow)?.start
    if (!start) {
      rejections.count(projectId, 404)
      return sendError(event, 404, [FLOW_NOT_FOUND])
    }
    const cors = flowCors(project, start)
    const corsAnswer = cors ? corsHeaders(cors, event.req.headers.get('origin')) : undefined
    // An hmac Start signs bodies; a GET has none, so the signature is over empty bytes.
    const auth = checkRunAuth(start.auth, event.req.headers, project.secrets, new Uint8Array(0))
    if (!auth.ok) {
      rejections.count(projectId, 401)
      return sendError(event, 401, [INVALID_TOKEN], { ...corsAnswer, 'www-authenticate': auth.challenge })
    }
    return sendJson(event, 200, { runId: state.runId, status: state.status, response: state.response }, { ...corsAnswer, 'cache-control': 'no-store' })
  }
}
