// The one reader of the `Authorization` header (RFC 9110: `<scheme> <credentials>`, the scheme in any
// case) and the challenges sent with a 401. The Run API's auth (auth.ts), the users' sign-in
// (sign-in.ts) and the tick (routes/tick.ts) all read the header here.

/** The credentials of `Authorization: <scheme> <credentials>` when the scheme is `scheme`, else null. */
export function authorizationCredentials(headers: Headers, scheme: 'bearer' | 'basic'): string | null {
  const header = headers.get('authorization')
  if (!header) return null
  const match = /^(\S+)\s+(.+)$/.exec(header.trim())
  if (!match || match[1]!.toLowerCase() !== scheme) return null
  return match[2]!.trim()
}

/** `WWW-Authenticate` of each kind of 401 (the Run API's per auth type is `challengeFor` in auth.ts). */
export const CHALLENGES = {
  /** A flow's bearer token, and a signed-in user's token (same realm: both are bearer tokens of flowctl). */
  bearer: 'Bearer realm="flowctl"',
  basic: 'Basic realm="flowctl"',
  /** The scheduler tick's CRON_SECRET. */
  cron: 'Bearer realm="flowctl-cron"',
} as const
