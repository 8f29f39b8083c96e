// Step 5 of the Run API: the Start's credential (SPEC §5.1, §19), 401 `invalid token` (or
// `missing credential`, `invalid signature`) with `WWW-Authenticate`. A signature covers the raw
// bytes, so an hmac Start reads them first (413 before its 401); a Stripe or Slack signature is
// accepted once, recorded in the store (a replay within its tolerance is a 401 too).
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { AuthSettings, Project } from '../../model/project.js'
import { challengeFor, checkRunAuth, type SignatureUse } from '../auth.js'
import { BODY_ERROR_CODES, readBodyBytes } from '../body.js'
import type { AppContext } from '../context.js'
import { nodeRequestOf } from './body.js'
import { openRunStore } from './guards.js'
import type { RunTarget } from './resolve.js'

/** The body's bytes when an hmac Start read them (the body step parses those), else undefined. */
export async function authenticate(context: AppContext, event: H3Event, target: RunTarget, readsBody: boolean): Promise<Uint8Array | undefined> {
  const { project, start } = target
  const auth = start.auth
  let bytes: Uint8Array | undefined
  if (auth?.type === 'hmac' && readsBody) {
    const read = await readBodyBytes(event.req, project.settings.limits.bodyLimitBytes, nodeRequestOf(event))
    if (!read.ok) throw httpError(BODY_ERROR_CODES[read.status], [read.error])
    bytes = read.bytes
  }
  const decision = checkRunAuth(auth, event.req.headers, project.secrets, bytes)
  if (!decision.ok) throw httpError('AUTH_REQUIRED', [decision.reason], { headers: { 'www-authenticate': decision.challenge } })
  if (decision.once) await claimSignatureOnce(context, project, target.flow.slug, auth!, decision.once)
  return bytes
}

/**
 * Records a valid timestamped signature as used, in the store (shared by every instance on
 * PostgreSQL). Already recorded: a replay, refused as any bad credential. No store: 503 (fail closed).
 */
async function claimSignatureOnce(context: AppContext, project: Project, flow: string, auth: AuthSettings, use: SignatureUse): Promise<void> {
  const store = await openRunStore(context, project)
  if (!(await store.guards.claimSignature(project.settings.projectId, flow, use.signature, use.expiresAt))) {
    throw httpError('AUTH_REQUIRED', ['invalid signature'], { headers: { 'www-authenticate': challengeFor(auth) } })
  }
}
