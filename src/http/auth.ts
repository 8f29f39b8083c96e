// Run API credentials: bearer, basic and apiKey. Expected values are resolved from the project's
// secrets per request; an empty or unresolved expected value rejects everything (fail closed).
// Comparisons hash both sides with SHA-256 and compare digests with timingSafeEqual, so neither the
// content nor the length of the expected value leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { AuthSettings, Secrets } from '../project/model.js'
import { resolveSecretText } from '../project/secrets.js'

export type AuthDecision = { ok: true } | { ok: false; challenge: string }

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/** Timing-safe equality of two strings (of any lengths). */
export function secretEquals(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected))
}

function expectedValue(template: string, secrets: Secrets): string | null {
  const value = resolveSecretText(template, secrets)
  return value === null || value === '' ? null : value
}

/** The value of `Authorization: <scheme> <value>`, or null. */
function authorizationValue(headers: Headers, scheme: string): string | null {
  const header = headers.get('authorization')
  if (!header) return null
  const match = /^(\S+)\s+(.+)$/.exec(header.trim())
  if (!match || match[1]!.toLowerCase() !== scheme) return null
  return match[2]!.trim()
}

export function challengeFor(auth: AuthSettings): string {
  if (auth.type === 'bearer') return 'Bearer realm="flowctl"'
  if (auth.type === 'basic') return 'Basic realm="flowctl"'
  return `ApiKey header="${auth.header || 'X-API-Key'}"`
}

/** Checks the request's credential against the Start's auth settings (null = no auth). */
export function checkRunAuth(auth: AuthSettings | null, headers: Headers, secrets: Secrets): AuthDecision {
  if (!auth) return { ok: true }
  const denied: AuthDecision = { ok: false, challenge: challengeFor(auth) }
  if (auth.type === 'bearer') {
    const expected = expectedValue(auth.token, secrets)
    const given = authorizationValue(headers, 'bearer')
    return expected !== null && given !== null && secretEquals(given, expected) ? { ok: true } : denied
  }
  if (auth.type === 'basic') {
    const username = expectedValue(auth.username, secrets)
    const password = expectedValue(auth.password, secrets)
    const encoded = authorizationValue(headers, 'basic')
    if (username === null || password === null || encoded === null) return denied
    const decoded = Buffer.from(encoded, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return denied
    // Both halves are always compared, so a right username does not answer faster.
    const userOk = secretEquals(decoded.slice(0, colon), username)
    const passOk = secretEquals(decoded.slice(colon + 1), password)
    return userOk && passOk ? { ok: true } : denied
  }
  const expected = expectedValue(auth.key, secrets)
  const given = headers.get(auth.header || 'X-API-Key')
  return expected !== null && given !== null && secretEquals(given, expected) ? { ok: true } : denied
}
