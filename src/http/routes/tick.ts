// `POST|GET /api/cron/tick`: one scheduler tick over every project of the workspace, behind
// CRON_SECRET (as `Authorization: Bearer <secret>` or `x-cron-secret`). No secret, nothing runs.
import type { H3Event } from 'h3'
import { secretEquals } from '../auth.js'
import { clientIp } from '../client.js'
import type { AppContext } from '../context.js'
import { errorResponse, INVALID_TOKEN, jsonResponse } from '../respond.js'
import { tickWorkspace } from '../../serve/tick-workspace.js'
import { authorizationCredentials, CHALLENGES } from '../authorization.js'

/** Failed secrets allowed per client IP in each 10 s window; past them the tick answers 429 (no guessing at speed). */
export const TICK_FAILURES_PER_WINDOW = 10
export const TICK_FAILURE_WINDOW_MS = 10_000

export function tickHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    // A client that keeps guessing is refused before its guess is even compared.
    const ip = clientIp(event, context.options)
    const throttled = context.tickFailures.check('tick', ip, TICK_FAILURES_PER_WINDOW)
    if (!throttled.allowed) {
      context.rejections.count(null, 429)
      return errorResponse(429, ['too many failed tick secrets; wait and retry'], { 'retry-after': String(throttled.retryAfterSeconds) })
    }
    if (!cronSecretMatches(event.req.headers, context.options.cronSecret)) {
      context.tickFailures.hit('tick', ip, TICK_FAILURES_PER_WINDOW)
      context.rejections.count(null, 401)
      return errorResponse(401, [INVALID_TOKEN], { 'www-authenticate': CHALLENGES.cron })
    }
    const summary = await tickWorkspace(context.workspace, new Date(), (line) => context.log(line, true))
    return jsonResponse(200, summary, { 'cache-control': 'no-store' })
  }
}

function cronSecretMatches(headers: Headers, secret: string | undefined): boolean {
  if (!secret) return false
  const given = authorizationCredentials(headers, 'bearer') ?? headers.get('x-cron-secret')
  return given !== null && given !== undefined && secretEquals(given, secret)
}
