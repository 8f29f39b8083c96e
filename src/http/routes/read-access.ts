// The sign-in rules of /api/openapi (SPEC §5.2): no or unknown user token 401, unknown project 404
// (after the sign-in check), no role on the project 403. Only the Authorization header signs in
// here (not the pages' cookie). A refusal is thrown; onError answers and counts it.
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { AppContext } from '../context.js'
import { CHALLENGES } from '../authorization.js'
import { countRejections } from '../rejections.js'
import { projectRole } from '../sign-in.js'
import type { WorkspaceEntry } from '../../serve/workspace.js'

export async function requireReadAccess(context: AppContext, event: H3Event, projectId: string): Promise<WorkspaceEntry> {
  const user = await context.users.signIn(event.req.headers)
  const entry = context.workspace.get(projectId)
  countRejections(event, entry ? projectId : null)
  if (!user) throw httpError('AUTH_REQUIRED', undefined, { headers: { 'www-authenticate': CHALLENGES.bearer } })
  if (!entry) throw httpError('PROJECT_NOT_FOUND')
  if (!projectRole(user, projectId)) throw httpError('FORBIDDEN')
  return entry
}
