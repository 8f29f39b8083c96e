// Who may see and do what on the pages and APIs of SPEC §14: a loopback request (loopback socket
// address AND a loopback Host header, §17) sees and does everything; anyone else signs in with a
// user token: a viewer reads, an editor or owner also runs and replays. /api/openapi keeps its own
// rules (read-access.ts).
import type { H3Event } from 'h3'
import type { Role, UserEntry } from '../users/types.js'
import { roleAllows } from '../users/types.js'
import { clientIp, isLoopback } from './client.js'
import type { AppContext } from './context.js'
import { errorResponse, INVALID_TOKEN } from './respond.js'
import { CHALLENGES } from './authorization.js'
import { cookieToken, projectRole } from './sign-in.js'
import type { WorkspaceEntry } from '../serve/workspace.js'

/** The caller of a page or API: every project (loopback), a user's projects, or nobody known. */
export type Caller = { kind: 'loopback' } | { kind: 'user'; user: UserEntry } | { kind: 'anonymous' }

/** What the caller needs on a project: `read` (viewer) or `run` (editor, owner). */
export type Need = 'read' | 'run'

const NEEDED_ROLE: Record<Need, Role> = { read: 'viewer', run: 'editor' }

/** `localhost`, `127.x.y.z`, `[::1]`, with any port. */
export function isLoopbackHost(host: string | null): boolean {
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

export type ProjectAccess = { ok: true; entry: WorkspaceEntry; caller: Caller } | { ok: false; status: number; errors: string[]; headers: Record<string, string> }

/**
 * The sign-in rules of §5.2 applied to §14's roles: nobody signed in 401, unknown project 404
 * (after the sign-in check), a role too small 403.
 */
export async function projectAccess(context: AppContext, event: H3Event, projectId: string, need: Need): Promise<ProjectAccess> {
  const caller = await callerOf(context, event)
  const entry = context.workspace.get(projectId)
  let denied: { status: number; errors: string[]; headers: Record<string, string> } | null = null
  if (caller.kind === 'anonymous') denied = { status: 401, errors: [INVALID_TOKEN], headers: { 'www-authenticate': CHALLENGES.bearer } }
  else if (!entry) denied = { status: 404, errors: ['project not found'], headers: {} }
  else if (!callerMay(caller, projectId, need)) denied = { status: 403, errors: ['forbidden'], headers: {} }
  if (denied) {
    context.rejections.count(entry && denied.status !== 404 ? projectId : null, denied.status)
    return { ok: false, ...denied }
  }
  return { ok: true, entry: entry!, caller }
}

/** The JSON answer of a refused ProjectAccess. */
export function accessResponse(access: Extract<ProjectAccess, { ok: false }>): Response {
  return errorResponse(access.status, access.errors, access.headers)
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
