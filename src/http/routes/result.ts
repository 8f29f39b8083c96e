// `GET /api/result/<projectId>/<runId>` (SPEC §12): the state of an async run, behind the same auth
// as the Start of the run's flow: `{ runId, status: queued|running|success|error, response }`, with
// `response` `{ status, body }` (what a synchronous call would have answered) once it finished.
// Checks (SPEC §19): unknown project 404, preflight, the Run API's rate limit (429, same limiter and
// budget as /api/run), then auth before the run id is looked at: a credential no async Start of the
// project accepts is a 401 without a store read. Then the run is read and its flow's Start decides.
// Every 401 is the same answer (body, challenge, CORS), so a run's existence is never told to a
// caller who may not read it. An unknown id answers 404 only to a caller every async Start accepts
// (it could read any run, so existence tells it nothing); to anyone else it is the same 401.
import { getRouterParam, type H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { Project, StartInfo } from '../../model/project.js'
import { challengeFor, checkRunAuth } from '../auth.js'
import { corsHeaders, flowCors, preflightHeaders } from '../cors.js'
import type { AppContext } from '../context.js'
import { countRejections } from '../rejections.js'
import { sendJson, type HeaderPairs } from '../respond.js'
import { checkRate } from '../run/limit.js'

const ALLOW = 'GET, HEAD'
/** A GET carries no body: an hmac Start's signature is checked over empty bytes. */
const NO_BODY = new Uint8Array(0)

export function resultHandler(context: AppContext) {
  const { workspace } = context
  return async (event: H3Event): Promise<Response | string> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const entry = workspace.get(projectId)
    countRejections(event, entry ? projectId : null)
    if (!entry) throw httpError('RUN_NOT_FOUND')
    const { project } = entry
    const readers = asyncStarts(project)
    const origin = event.req.headers.get('origin')
    if (event.req.method === 'OPTIONS') return preflightAnswer(project, readers, event.req.headers)
    // Answers given before the run's flow is known (429, 401) carry the CORS of any async Start that
    // allows the origin, so a browser can read them, and they are the same whatever the run id.
    const sharedCors = anyStartCors(project, readers, origin)
    // `runsPerMinutePerIp`, counted in the Run API's limiter (one budget per client for both routes).
    const rated = checkRate(context, event, project, sharedCors)
    if (rated) await rated

    const headers = event.req.headers
    const accepted = readers.filter((start) => checkRunAuth(start.auth, headers, project.secrets, NO_BODY).ok)
    const refused = httpError('AUTH_REQUIRED', undefined, { headers: { ...sharedCors, 'www-authenticate': challengesOf(readers) } })
    if (accepted.length === 0) throw refused

    const store = await workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE', undefined, { headers: sharedCors })
    // A store outage throws STORE_UNAVAILABLE (503).
    const state = await store.queue.get(projectId, getRouterParam(event, 'runId') ?? '')
    // A flow removed since its run was queued has no Start: nobody may read the run (fail closed).
    const start = state ? project.flows.get(state.flow)?.start : undefined
    if (!state || !start) {
      if (accepted.length === readers.length) throw httpError('RUN_NOT_FOUND', undefined, { headers: sharedCors })
      throw refused
    }
    if (!accepted.includes(start) && !checkRunAuth(start.auth, headers, project.secrets, NO_BODY).ok) throw refused
    const cors = flowCors(project, start)
    const corsAnswer = cors ? corsHeaders(cors, origin) : undefined
    return sendJson(event, 200, { runId: state.runId, status: state.status, response: state.response }, { ...corsAnswer, 'cache-control': 'no-store' })
  }
}

/** The Starts whose runs can be queued: those with `respond: async`. */
function asyncStarts(project: Project): StartInfo[] {
  const starts: StartInfo[] = []
  for (const flow of project.flows.values()) if (flow.start?.respond === 'async') starts.push(flow.start)
  return starts
}

/** The CORS headers of the first async Start that allows `origin`; `Vary: Origin` alone when none does. */
function anyStartCors(project: Project, starts: StartInfo[], origin: string | null): HeaderPairs | undefined {
  let fallback: HeaderPairs | undefined
  for (const start of starts) {
    const cors = flowCors(project, start)
    if (!cors) continue
    const headers = corsHeaders(cors, origin)
    if (headers['access-control-allow-origin']) return headers
    fallback = headers
  }
  return fallback
}

/**
 * A preflight (SPEC §20): allowed when an async Start's CORS allows the origin. It names no run, so
 * it cannot tell which flow the run belongs to: the allowed headers are those of every async Start
 * that allows the origin (their credential headers and header inputs).
 */
function preflightAnswer(project: Project, starts: StartInfo[], headers: Headers): Response {
  const origin = headers.get('origin')
  let answer: HeaderPairs | null = null
  const allowHeaders = new Set<string>()
  if (headers.has('access-control-request-method')) {
    for (const start of starts) {
      const cors = flowCors(project, start)
      const preflight = cors ? preflightHeaders(cors, origin, ALLOW) : null
      if (!preflight) continue
      answer ??= preflight
      for (const name of preflight['access-control-allow-headers']!.split(', ')) allowHeaders.add(name)
    }
  }
  if (answer) return new Response(null, { status: 204, headers: { ...answer, 'access-control-allow-headers': [...allowHeaders].join(', ') } })
  return new Response(null, { status: 204, headers: { allow: `${ALLOW}, OPTIONS`, ...anyStartCors(project, starts, origin) } })
}

/** One `WWW-Authenticate` for every 401 of the project's result route: the challenges of its async Starts. */
function challengesOf(starts: StartInfo[]): string {
  const challenges = new Set<string>()
  for (const start of starts) if (start.auth) challenges.add(challengeFor(start.auth))
  return challenges.size === 0 ? 'Bearer realm="flowctl"' : [...challenges].join(', ')
}
