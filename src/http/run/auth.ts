// Step 5 of the Run API: the Start's credential (SPEC §5.1, §19), 401 `invalid token` (or
// `missing credential`, `invalid signature`) with `WWW-Authenticate`. A signature covers the raw
// bytes, so an hmac Start reads them first (413 before its 401); a Stripe or Slack signature is
// accepted once, recorded in the store (a replay within its tolerance is a 401 too).
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import { challengeFor, checkRunAuth, type SignatureUse } from '../auth.js'
import { BODY_ERROR_CODES, readBodyBytes } from '../body.js'
import type { AppContext } from '../context.js'
import { nodeRequestOf } from './body.js'
import { openRunStore } from './guards.js'
import type { RunTarget } from './resolve.js'

/**
 * Null when decided at once (no hmac: the common case makes no promise); else a promise of the
 * body's bytes the hmac Start read (the body step parses those). A refusal is thrown.
 */
export function authenticate(context: AppContext, event: H3Event, target: RunTarget, readsBody: boolean): Promise<Uint8Array | undefined> | null {
  if (target.start.auth?.type === 'hmac' && readsBody) return authenticateSigned(context, event, target)
  const once = checkCredential(target, event.req.headers, undefined)
  return once ? claimSignatureOnce(context, target, once).then(() => undefined) : null
}

async function authenticateSigned(context: AppContext, event: H3Event, target: RunTarget): Promise<Uint8Array> {
  const read = await readBodyBytes(event.req, target.project.settings.limits.bodyLimitBytes, nodeRequestOf(event))
  if (!read.ok) throw httpError(BODY_ERROR_CODES[read.status], [read.error])
  const once = checkCredential(target, event.req.headers, read.bytes)
  if (once) await claimSignatureOnce(context, target, once)
  return read.bytes
}

/** Throws the 401; a timestamped signature comes back, to be claimed once. */
function checkCredential(target: RunTarget, headers: Headers, bytes: Uint8Array | undefined): SignatureUse | undefined {
  const decision = checkRunAuth(target.start.auth, headers, target.project.secrets, bytes)
  if (!decision.ok) throw httpError('AUTH_REQUIRED', [decision.reason], { headers: { 'www-authenticate': decision.challenge } })
  return decision.once
}

/**
 * Records a valid timestamped signature as used, in the store (shared by every instance on
 * PostgreSQL). Already recorded: a replay, refused as any bad credential. No store: 503 (fail closed).
 */
async function claimSignatureOnce(context: AppContext, target: RunTarget, use: SignatureUse): Promise<void> {
  const { project, flow, start } = target
  const store = await openRunStore(context, project)
  if (!(await store.guards.claimSignature(project.settings.projectId, flow.slug, use.signature, use.expiresAt))) {
    throw httpError('AUTH_REQUIRED', ['invalid signature'], { headers: { 'www-authenticate': challengeFor(start.auth!) } })
  }
}
