// The Run API: `/api/run/<projectId>/<slug>[/{param}...]`, every method. The steps in SPEC order
// (§5.1, §11, §12, §17, §19), one file each in ../run/: resolve (404), preflight (OPTIONS), method
// (405), limit (429), auth (401; an hmac Start reads the body first, 413), body (413/415/400),
// store and guards (503, idempotency 409/422, concurrency 429), then the engine (400 for invalid
// inputs; the answer of its outcome) or, for `respond: async`, the queue (202).
import type { H3Event } from 'h3'
import { FlowctlError } from '../../errors.js'
import type { AppContext } from '../context.js'
import { answerError } from '../respond.js'
import { withoutBody } from '../run/answer.js'
import { authenticate } from '../run/auth.js'
import { acceptBody, NO_BODY, readBody } from '../run/body.js'
import { queueRun, runNow } from '../run/execute.js'
import { openRunStore } from '../run/guards.js'
import { runCall } from '../run/input.js'
import { checkRate } from '../run/limit.js'
import { checkMethod, readsBody } from '../run/method.js'
import { corsOfRequest, preflightAnswer, setCors } from '../run/preflight.js'
import { resolveFlow } from '../run/resolve.js'

/**
 * Refusals are thrown (FlowctlError) and answered right here, counted for the project on /status:
 * passed on to h3, each would be wrapped in an HTTPError of h3's (which captures a stack) and
 * answered by app.ts's onError a few promise turns later. That is the cost of every request of a
 * flood of 401s or 404s. Other errors still go to onError.
 */
export function runHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response | string> => {
    let answer: Response | string
    try {
      answer = await runRoute(context, event)
    } catch (error) {
      if (!(error instanceof FlowctlError)) throw error
      answer = answerError(event, error, context.rejections)
    }
    // HEAD answers as GET would, without the body.
    return event.req.method === 'HEAD' ? withoutBody(event, answer) : answer
  }
}

/**
 * Each step throws its refusal as a catalog error or returns what the next one needs. Steps that
 * can decide at once (the instance rate limit, a non-hmac credential) return no promise then.
 */
async function runRoute(context: AppContext, event: H3Event): Promise<Response | string> {
  const target = resolveFlow(context, event)
  const cors = corsOfRequest(target, event)
  if (event.req.method === 'OPTIONS') return preflightAnswer(target.start, cors, event.req.headers)
  setCors(event, cors)
  const method = checkMethod(event, target.start)
  const rated = checkRate(context, event, target.project)
  if (rated) await rated
  const withBody = readsBody(target.start, method)
  const signed = authenticate(context, event, target, withBody)
  const bytes = signed ? await signed : undefined
  const body = withBody ? acceptBody(context, target, await readBody(event, target, bytes)) : NO_BODY
  const store = await openRunStore(context, target.project)
  const call = runCall(context, event, target, method, body, store, cors)
  return target.start.respond === 'async' ? queueRun(context, event, call) : runNow(context, event, call)
}
