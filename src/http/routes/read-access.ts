// The sign-in rules shared by /api/openapi and /api/runs (SPEC §5.2): no or unknown user token 401,
// unknown project 404 (after the sign-in check), no role on the project 403.
import type { H3Event } from 'h3'
import type { AppContext } from '../context.js'
import { errorResponse, INVALID_TOKEN } from '../respond.js'
import { CHALLENGES } from '../authorization.js'
import { projectRole } from '../sign-in.js'
import type { WorkspaceEntry } from '../../serve/workspace.js'

export type ReadAccess = { ok: true; entry: WorkspaceEntry } | { ok: false; response: Response }

export async function checkReadAccess(context: AppContext, event: H3Event, projectId: string): Promise<ReadAccess> {
  const user = await context.users.signIn(event.req.headers)
  const entry = context.workspace.get(projectId)
  if (!user) {
    context.rejections.count(entry ? projectId : null, 401)
    return { ok: false, response: errorResponse(401, [INVALID_TOKEN], { 'www-authenticate': CHALLENGES.bearer }) }
  }
  if (!entry) {
    context.rejections.count(null, 404)
    return { ok: false, response: errorResponse(404, ['project not found']) }
  }
  if (!projectRole(user, projectId)) {
    context.rejections.count(projectId, 403)
    return { ok: false, response: errorResponse(403, ['forbidden']) }
  }
  return { ok: true, entry }
}
