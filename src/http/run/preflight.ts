// Step 2 of the Run API (SPEC §5.1, §11, §20): the flow's CORS answer for this request, and
// `OPTIONS`: 204 with the preflight headers for an allowed origin, else `Allow`. After this step
// every answer, refusals included, carries the flow's CORS headers.
import type { H3Event } from 'h3'
import type { StartInfo } from '../../model/project.js'
import { corsHeaders, flowCors, preflightHeaders, type FlowCors } from '../cors.js'
import type { HeaderPairs } from '../respond.js'
import { allowedMethods } from './method.js'
import type { RunTarget } from './resolve.js'

export interface RunCors {
  settings: FlowCors | null
  origin: string | null
  /** The CORS headers of every answer to this request; undefined for a flow without CORS settings. */
  answer: HeaderPairs | undefined
}

/** Most flows have no CORS settings: they share this. */
const NO_CORS: RunCors = { settings: null, origin: null, answer: undefined }

export function corsOfRequest(target: RunTarget, event: H3Event): RunCors {
  const settings = flowCors(target.project, target.start, target.flow)
  if (!settings) return NO_CORS
  const origin = event.req.headers.get('origin')
  return { settings, origin, answer: corsHeaders(settings, origin) }
}

/** The 204 of an `OPTIONS` request. */
export function preflightAnswer(start: StartInfo, cors: RunCors, headers: Headers): Response {
  const allowed = allowedMethods(start)
  const preflight = cors.settings && headers.has('access-control-request-method') ? preflightHeaders(cors.settings, cors.origin, allowed) : null
  return new Response(null, { status: 204, headers: preflight ?? { allow: `${allowed}, OPTIONS`, ...cors.answer } })
}

/** The flow's CORS headers on every answer from here on (set again over an End's own headers). */
export function setCors(event: H3Event, cors: RunCors): void {
  const answer = cors.answer
  if (answer) for (const name in answer) event.res.headers.set(name, answer[name]!)
}
