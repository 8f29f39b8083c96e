// `GET /api/result/<projectId>/<runId>` (SPEC §12): the state of an async run, behind the same auth
// as the Start of the run's flow: `{ runId, status: queued|running|success|error, response }`, with
// `response` `{ status, body }` (what a synchronous call would have answered) once it finished.
// Checks: unknown project or run 404, store 503, then the flow's auth 401.
import { getRouterParam, type H3Event } from 'h3'
import { httpError } from '../../errors.js'
import { checkRunAuth } from '../auth.js'
import { corsHeaders, flowCors } from '../cors.js'
import type { AppContext } from '../context.js'
import { countRejections } from '../rejections.js'
import { sendJson } from '../respond.js'

export function resultHandler(context: AppContext) {
  const { workspace } = context
  return async (event: H3Event): Promise<string> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const runId = getRouterParam(event, 'runId') ?? ''
    const entry = workspace.get(projectId)
    countRejections(event, entry ? projectId : null)
    if (!entry) throw httpError('RUN_NOT_FOUND')
    const store = await workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    // A store outage throws STORE_UNAVAILABLE (503).
    const state = await store.getAsyncRun(projectId, runId)
    if (!state) throw httpError('RUN_NOT_FOUND')
    const { project } = entry
    // The flow's Start decides who may read; a flow removed since has none, so nobody may (fail closed).
    const start = project.flows.get(state.flow)?.start
    if (!start) throw httpError('FLOW_NOT_FOUND')
    const cors = flowCors(project, start)
    const corsAnswer = cors ? corsHeaders(cors, event.req.headers.get('origin')) : undefined
    // An hmac Start signs bodies; a GET has none, so the signature is over empty bytes.
    const auth = checkRunAuth(start.auth, event.req.headers, project.secrets, new Uint8Array(0))
    if (!auth.ok) throw httpError('AUTH_REQUIRED', undefined, { headers: { ...corsAnswer, 'www-authenticate': auth.challenge } })
    return sendJson(event, 200, { runId: state.runId, status: state.status, response: state.response }, { ...corsAnswer, 'cache-control': 'no-store' })
  }
}
