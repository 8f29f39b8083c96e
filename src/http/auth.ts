// Run API credentials: bearer, basic, apiKey and hmac (a signature of the raw body bytes; Stripe's and
// Slack's timestamped forms in signed-webhooks.ts). Expected values are resolved from the project's
// secrets (once per loaded secrets map); an empty or unresolved expected value rejects everything (fail closed).
// Comparisons hash both sides with SHA-256 and compare digests with timingSafeEqual, so neither the
// content nor the length of the expected value leaks through timing.
import { createHmac, hash, timingSafeEqual } from 'node:crypto'
import type { AuthSettings, HmacAuth, Secrets } from '../model/project.js'
import { resolveSecretText, secretNamesIn } from '../language/secrets.js'
import { authorizationCredentials, CHALLENGES } from './authorization.js'
import { timestampedSignature, type SignatureUse } from './signed-webhooks.js'
import { DEFAULT_TOLERANCE_SECONDS } from '../nodes/start/settings.js'

export type { SignatureUse } from './signed-webhooks.js'

/** `once`: a timestamped signature (Stripe, Slack), valid but to be recorded as used before it is accepted. */
export type AuthDecision = { ok: true; once?: SignatureUse } | { ok: false; challenge: string; reason: AuthRefusal }

/** What a 401 says (SPEC §21): no credential at all, a wrong one, or a signature that does not match. */
type AuthRefusal = 'missing credential' | 'invalid token' | 'invalid signature'

const ALLOWED: AuthDecision = Object.freeze({ ok: true })

/**
 * One-shot SHA-256 (no Hash object per call). The binary (latin1) round trip is byte-exact and, on Node 20,
 * cheaper than asking `hash` for a Buffer.
 */
function digest(text: string): Buffer {
  return Buffer.from(hash('sha256', text, 'binary'), 'binary')
}

/** Timing-safe equality of two strings (of any lengths). */
export function secretEquals(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected))
}

/**
 * An expected credential resolved from the secrets, with its digest (null: reject every request),
 * made once per secrets map and template: a project's secrets never change once loaded (a reload
 * makes a new map), and resolving the template and hashing it was a fifth of the auth check's CPU
 * on every request.
 */
const expectedCredentials = new WeakMap<Secrets, Map<string, { text: string; digest: Buffer } | null>>()

function expectedCredential(template: string, secrets: Secrets): { text: string; digest: Buffer } | null {
  let credentials = expectedCredentials.get(secrets)
  if (!credentials) expectedCredentials.set(secrets, (credentials = new Map()))
  let expected = credentials.get(template)
  if (expected === undefined) {
    const text = resolveCredential(template, secrets)
    expected = text === null ? null : { text, digest: digest(text) }
    credentials.set(template, expected)
  }
  return expected
}

/** Timing-safe: `given` against the expected credential of `template`; false when there is none. */
function matchesExpected(given: string, template: string, secrets: Secrets): boolean {
  const expected = expectedCredential(template, secrets)
  return expected !== null && timingSafeEqual(digest(given), expected.digest)
}

/**
 * An expected credential, or null (reject every request) when it is blank or any secret inside it
 * is missing or blank, whatever text surrounds the secret (SPEC §17): `tok-${secrets.EMPTY}` with an
 * empty secret must not accept `Bearer tok-`.
 */
function resolveCredential(template: string, secrets: Secrets): string | null {
  for (const name of secretNamesIn(template)) if ((secrets.get(name) ?? '').trim() === '') return null
  const text = resolveSecretText(template, secrets)
  return text === null || text.trim() === '' ? null : text
}

export function challengeFor(auth: AuthSettings): string {
  if (auth.type === 'bearer') return CHALLENGES.bearer
  if (auth.type === 'basic') return CHALLENGES.basic
  if (auth.type === 'hmac') return `Signature header="${auth.header}"`
  return `ApiKey header="${auth.header}"`
}

/**
 * Checks the request's credential against the Start's auth settings (null = no auth). `rawBody`
 * is the body's bytes as received: hmac signs them (other types ignore it).
 */
export function checkRunAuth(auth: AuthSettings | null, headers: Headers, secrets: Secrets, rawBody?: Uint8Array, now = Date.now()): AuthDecision {
  if (!auth) return ALLOWED
  // Built only for a refusal: an accepted request (the common one) makes no decision object.
  const refused = (reason: AuthRefusal): AuthDecision => ({ ok: false, challenge: challengeFor(auth), reason })
  if (auth.type === 'bearer') {
    const given = authorizationCredentials(headers, 'bearer')
    if (given === null) return refused('missing credential')
    return matchesExpected(given, auth.token, secrets) ? ALLOWED : refused('invalid token')
  }
  if (auth.type === 'basic') {
    const encoded = authorizationCredentials(headers, 'basic')
    if (encoded === null) return refused('missing credential')
    const decoded = Buffer.from(encoded, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return refused('invalid token')
    // Blank credentials never match, even if the expected ones were somehow blank too.
    if (decoded.slice(0, colon).trim() === '' || decoded.slice(colon + 1).trim() === '') return refused('invalid token')
    // Both halves are always compared, so a right username does not answer faster.
    const userOk = matchesExpected(decoded.slice(0, colon), auth.username, secrets)
    const passOk = matchesExpected(decoded.slice(colon + 1), auth.password, secrets)
    return userOk && passOk ? ALLOWED : refused('invalid token')
  }
  if (auth.type === 'hmac') {
    const body = rawBody ?? new Uint8Array(0)
    if (!headers.has(signatureHeaderOf(auth))) return refused('missing credential')
    if (auth.scheme) {
      const secret = expectedCredential(auth.secret, secrets)?.text ?? null
      const once = secret === null ? null : timestampedSignature(auth.scheme, auth.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS, secret, headers, body, now)
      return once ? { ok: true, once } : refused('invalid signature')
    }
    return hmacMatches(auth, headers, secrets, body) ? ALLOWED : refused('invalid signature')
  }
  const given = headers.get(auth.header)
  if (given === null) return refused('missing credential')
  return matchesExpected(given, auth.key, secrets) ? ALLOWED : refused('invalid token')
}

/** The header that carries an hmac Start's signature: its own, or its scheme's. */
function signatureHeaderOf(auth: HmacAuth): string {
  if (auth.scheme === 'stripe') return 'stripe-signature'
  if (auth.scheme === 'slack') return 'x-slack-signature'
  return auth.header
}

/**
 * `<prefix><digest>` in the signature header against the HMAC of the bytes. Hex is compared in
 * lower case (senders differ); the prefix must match exactly. Fails closed on an empty secret.
 */
function hmacMatches(auth: HmacAuth, headers: Headers, secrets: Secrets, body: Uint8Array): boolean {
  const secret = expectedCredential(auth.secret, secrets)?.text ?? null
  const header = headers.get(auth.header)
  if (secret === null || header === null) return false
  const signature = header.trim()
  if (!signature.startsWith(auth.prefix)) return false
  const given = signature.slice(auth.prefix.length)
  const computed = createHmac(auth.algorithm, secret).update(body).digest(auth.encoding)
  // Both sides hashed before timingSafeEqual: equal lengths, and nothing learnt from timing.
  return timingSafeEqual(digest(auth.encoding === 'hex' ? given.toLowerCase() : given), digest(computed))
}
