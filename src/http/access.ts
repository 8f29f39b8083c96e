// Who may see and do what on the pages and APIs of SPEC §14: a loopback request (loopback socket
// address AND a loopback Host header, §17) sees and does everything; anyone else signs in with a
// user token: a viewer reads, an editor or owner also runs and replays. /api/openapi keeps its own
// rules (read-access.ts).
import type { H3Event } from 'h3'
import { httpError, type FlowctlError } from '../errors.js'
import type { Role, UserEntry } from '../users/types.js'
import { roleAllows } from '../users/types.js'
import { clientIp, isLoopback } from './client.js'
import type { AppContext } from './context.js'
import { CHALLENGES } from './authorization.js'
import { countRejections } from './rejections.js'
import { cookieToken, projectRole } from './sign-in.js'
import type { WorkspaceEntry } from '../serve/workspace.js'

/** The caller of a page or API: every project (loopback), a user's projects, or nobody known. */
export type Caller = { kind: 'loopback' } | { kind: 'user'; user: UserEntry } | { kind: 'anonymous' }

/** What the caller needs on a project: `read` (viewer), `run` or `edit` flow files (editor, owner). */
export type Need = 'read' | 'run' | 'edit'

const NEEDED_ROLE: Record<Need, Role> = { read: 'viewer', run: 'editor', edit: 'editor' }

/** `localhost`, `127.x.y.z`, `[::1]`, with any port. */
function isLoopbackHost(host: string | null): boolean {
  if (!host) return false
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '')
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
}

/** A loopback client that also addressed the server by a loopback name (no DNS rebinding). */
export function isLoopbackRequest(context: AppContext, event: H3Event): boolean {
  if (!isLoopback(clientIp(event, context.options))) return false
  const host = event.req.headers.get('host') ?? event.url.host
  return isLoopbackHost(host) || (context.options.allowedHosts ?? []).includes(host.replace(/:\d+$/, '').toLowerCase())
}

export async function callerOf(context: AppContext, event: H3Event): Promise<Caller> {
  if (isLoopbackRequest(context, event)) return { kind: 'loopback' }
  const headers = event.req.headers
  // The Authorization header, else the cookie of /sign-in (browsers cannot send the header on pages).
  const cookie = headers.has('authorization') ? null : cookieToken(headers)
  const user = await context.users.signIn(cookie ? new Headers({ authorization: `Bearer ${cookie}` }) : headers)
  return user ? { kind: 'user', user } : { kind: 'anonymous' }
}

export function callerMay(caller: Caller, projectId: string, need: Need): boolean {
  if (caller.kind === 'loopback') return true
  if (caller.kind === 'anonymous') return false
  return roleAllows(projectRole(caller.user, projectId), NEEDED_ROLE[need])
}

/** The projects a caller may read, in workspace order. */
export function readableEntries(context: AppContext, caller: Caller): WorkspaceEntry[] {
  return context.workspace.list().filter((entry) => callerMay(caller, entry.project.settings.projectId, 'read'))
}

export type ProjectAccess =
  | { ok: true; entry: WorkspaceEntry; caller: Caller }
  /** `countedFor`: the /status bucket of the refusal (null for an unknown project). */
  | { ok: false; error: FlowctlError; countedFor: string | null }

/**
 * The sign-in rules of §5.2 applied to §14's roles: nobody signed in 401 (AUTH_REQUIRED), unknown
 * project 404 (after the sign-in check), a role too small 403 (FORBIDDEN). The refusal is counted
 * on /status; pages render it as a page, the APIs throw it (`requireAccess`).
 */
export async function projectAccess(context: AppContext, event: H3Event, projectId: string, need: Need): Promise<ProjectAccess> {
  const caller = await callerOf(context, event)
  const entry = context.workspace.get(projectId)
  const error = refusal(caller, entry, projectId, need)
  if (!error) return { ok: true, entry: entry!, caller }
  const countedFor = entry ? projectId : null
  context.rejections.count(countedFor, error.httpStatus)
  return { ok: false, error, countedFor }
}

/** `projectAccess` for the JSON APIs: a refusal is thrown, and onError answers and counts it. */
export async function requireAccess(context: AppContext, event: H3Event, projectId: string, need: Need): Promise<Extract<ProjectAccess, { ok: true }>> {
  const caller = await callerOf(context, event)
  const entry = context.workspace.get(projectId)
  countRejections(event, entry ? projectId : null)
  const error = refusal(caller, entry, projectId, need)
  if (error) throw error
  return { ok: true, entry: entry!, caller }
}

function refusal(caller: Caller, entry: WorkspaceEntry | undefined, projectId: string, need: Need): FlowctlError | null {
  if (caller.kind === 'anonymous') return httpError('AUTH_REQUIRED', undefined, { headers: { 'www-authenticate': CHALLENGES.bearer } })
  if (!entry) return httpError('PROJECT_NOT_FOUND')
  if (!callerMay(caller, projectId, need)) return httpError('FORBIDDEN')
  return null
}

/**
 * A browser sends `Origin` with every cross-site POST: an action (run, replay) from another site's
 * page is refused, so a page elsewhere cannot make a loopback browser run flows. Callers that send
 * no Origin (curl, scripts) are not browsers acting for someone else.
 */
export function isCrossSite(event: H3Event): boolean {
  const origin = event.req.headers.get('origin')
  if (origin === null) return event.req.headers.get('sec-fetch-site') === 'cross-site'
  let originHost: string
  try {
    originHost = new URL(origin).host
  } catch {
    return true
  }
  return originHost !== (event.req.headers.get('host') ?? event.url.host)
}
