// `POST|GET /api/cron/tick`: one scheduler tick over every project of the workspace, behind
// CRON_SECRET (as `Authorization: Bearer <secret>` or `x-cron-secret`). No secret, nothing runs.
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import { secretEquals } from '../auth.js'
import { clientIp } from '../client.js'
import type { AppContext } from '../context.js'
import { countRejections } from '../rejections.js'
import { jsonResponse } from '../respond.js'
import { tickWorkspace } from '../../serve/tick-workspace.js'
import { authorizationCredentials, CHALLENGES } from '../authorization.js'

/** Failed secrets allowed per client IP in each 10 s window; past them the tick answers 429 (no guessing at speed). */
const TICK_FAILURES_PER_WINDOW = 10
export const TICK_FAILURE_WINDOW_MS = 10_000

export function tickHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    // Failures are counted per client group (rate-limit.ts keys by clientGroup), so a caller with the
    // right secret is never refused because of guesses from other addresses (SPEC §19). A client that
    // keeps guessing is refused before its guess is even compared, right secret included, until its
    // window ends: answering its right guess with a 200 would let it guess at full speed anyway.
    const ip = clientIp(event, context.options)
    const throttled = context.tickFailures.check('tick', ip, TICK_FAILURES_PER_WINDOW)
    countRejections(event, null)
    if (!throttled.allowed) {
      throw httpError('RATE_LIMITED', ['too many failed tick secrets; wait and retry'], { headers: { 'retry-after': String(throttled.retryAfterSeconds) } })
    }
    if (!cronSecretMatches(event.req.headers, context.options.cronSecret)) {
      context.tickFailures.hit('tick', ip, TICK_FAILURES_PER_WINDOW)
      throw httpError('AUTH_REQUIRED', undefined, { headers: { 'www-authenticate': CHALLENGES.cron } })
    }
    // A tick that throws is a 500, not a refusal of the caller.
    countRejections(event, undefined)
    const summary = await tickWorkspace(context.workspace, new Date(), (line) => context.log(line, true))
    return jsonResponse(200, summary, { 'cache-control': 'no-store' })
  }
}

function cronSecretMatches(headers: Headers, secret: string | undefined): boolean {
  if (!secret) return false
  const given = authorizationCredentials(headers, 'bearer') ?? headers.get('x-cron-secret')
  return given !== null && given !== undefined && secretEquals(given, secret)
}
