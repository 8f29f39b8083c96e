// `POST|GET /api/cron/tick`: one scheduler tick over every project of the workspace, behind
// CRON_SECRET (as `Authorization: Bearer <secret>` or `x-cron-secret`). No secret, nothing runs.
import type { H3Event } from 'h3'
import { secretEquals } from '../auth.js'
import type { AppContext } from '../context.js'
import { errorResponse, INVALID_TOKEN, jsonResponse } from '../respond.js'
import { tickWorkspace } from '../tick-workspace.js'

export function tickHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    if (!cronSecretMatches(event.req.headers, context.options.cronSecret)) {
      context.rejections.count(null, 401)
      return errorResponse(401, [INVALID_TOKEN], { 'www-authenticate': 'Bearer realm="flowctl-cron"' })
    }
    const summary = await tickWorkspace(context.workspace, new Date(), (line) => context.log(line, true))
    return jsonResponse(200, summary, { 'cache-control': 'no-store' })
  }
}

function cronSecretMatches(headers: Headers, secret: string | undefined): boolean {
  if (!secret) return false
  const authorization = headers.get('authorization')
  const bearer = authorization ? /^bearer\s+(.+)$/i.exec(authorization.trim())?.[1] : undefined
  const given = bearer ?? headers.get('x-cron-secret')
  return given !== null && given !== undefined && secretEquals(given, secret)
}
