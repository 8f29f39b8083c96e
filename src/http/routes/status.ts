// `/status` (HTML) and `/api/status` (JSON). Loopback clients see every project; a signed-in user
// sees the projects they have a role in; anyone else sees overall health and the heartbeat.
import type { H3Event } from 'h3'
import { isLoopbackRequest } from '../access.js'
import type { AppContext } from '../context.js'
import { htmlResponse, jsonResponse } from '../respond.js'
import { projectRole } from '../sign-in.js'
import { buildStatus, type Viewer } from '../status-data.js'
import { renderStatusPage } from '../status-page.js'

async function viewerOf(context: AppContext, event: H3Event): Promise<Viewer> {
  // Loopback privileges need a loopback socket address and a loopback Host header (SPEC §17).
  if (isLoopbackRequest(context, event)) return { kind: 'all' }
  const user = await context.users.signIn(event.req.headers)
  if (!user) return { kind: 'public' }
  const projectIds = new Set(
    context.workspace
      .list()
      .map((entry) => entry.project.settings.projectId)
      .filter((id) => projectRole(user, id) !== null),
  )
  return { kind: 'projects', projectIds }
}

const NO_STORE = { 'cache-control': 'no-store' }

export function statusJsonHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => jsonResponse(200, await buildStatus(context, await viewerOf(context, event)), NO_STORE)
}

export function statusPageHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> =>
    htmlResponse(200, renderStatusPage(await buildStatus(context, await viewerOf(context, event))), {
      ...NO_STORE,
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    })
}
