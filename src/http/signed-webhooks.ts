// Signatures with a timestamp, as Stripe and Slack send them (SPEC §19). Each sender signs the
// timestamp together with the raw body, so a captured request cannot be sent again later with a
// new timestamp; within the tolerance it could, so a valid signature is returned for the caller to
// record as used (see GuardStore.claimSignature): each is accepted once.
//   Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]`, HMAC-SHA256 of `<t>.<body>`; any v1 may match
//           (several while a secret is rolled); other schemes in the header (v0) are ignored.
//   Slack:  `X-Slack-Signature: v0=<hex>` and `X-Slack-Request-Timestamp: <unix>`, HMAC-SHA256 of `v0:<t>:<body>`.
import { createHmac, hash, timingSafeEqual } from 'node:crypto'
import type { HmacScheme } from '../model/project.js'

/**
 * A timestamped signature that was valid: the caller records it in the store as used until
 * `expiresAt` (epoch ms) and refuses the request when it was already there (a replay).
 */
export interface SignatureUse {
  /** A digest of the scheme, timestamp and signature: one per signed request. */
  signature: string
  expiresAt: number
}

/** A signature as received: its timestamp (seconds) and the hex digests offered. */
interface Offered {
  timestamp: number
  signatures: string[]
}

const UNIX_SECONDS = /^\d{1,12}$/
const SHA256_HEX = /^[0-9a-fA-F]{64}$/
/** At most this many v1 entries are compared (Stripe sends one or two): a long header costs nothing. */
const MAX_SIGNATURES = 8

/**
 * The signature's use record when the request carries a valid signature of `scheme` whose timestamp
 * is within `toleranceSeconds` of `now` (either way); null otherwise. `secret` is never empty here.
 */
export function timestampedSignature(
  scheme: HmacScheme,
  toleranceSeconds: number,
  secret: string,
  headers: Headers,
  body: Uint8Array,
  now: number,
): SignatureUse | null {
  const offered = scheme === 'stripe' ? stripeOffer(headers.get('stripe-signature')) : slackOffer(headers)
  if (!offered) return null
  if (Math.abs(now / 1000 - offered.timestamp) > toleranceSeconds) return null
  const prefix = scheme === 'stripe' ? `${offered.timestamp}.` : `v0:${offered.timestamp}:`
  const expected = Buffer.from(createHmac('sha256', secret).update(prefix).update(body).digest('hex'), 'latin1')
  let matched = false
  // Every offered signature is compared (no early exit), each in constant time.
  for (const given of offered.signatures) if (timingSafeEqual(Buffer.from(given.toLowerCase(), 'latin1'), expected)) matched = true
  if (!matched) return null
  return {
    signature: hash('sha256', `${scheme}:${offered.timestamp}:${expected.toString('latin1')}`),
    // Past the tolerance the timestamp is refused anyway, so the record is needed until then.
    expiresAt: (offered.timestamp + toleranceSeconds) * 1000 + 1000,
  }
}

function stripeOffer(header: string | null): Offered | null {
  if (header === null) return null
  let timestamp: number | null = null
  const signatures: string[] = []
  for (const item of header.split(',', 64)) {
    const equals = item.indexOf('=')
    if (equals < 0) continue
    const key = item.slice(0, equals).trim()
    const value = item.slice(equals + 1).trim()
    if (key === 't') {
      // Two timestamps: which one was signed is unclear, so the header is refused.
      if (timestamp !== null || !UNIX_SECONDS.test(value)) return null
      timestamp = Number(value)
    } else if (key === 'v1' && SHA256_HEX.test(value) && signatures.length < MAX_SIGNATURES) signatures.push(value)
  }
  return timestamp !== null && signatures.length > 0 ? { timestamp, signatures } : null
}

function slackOffer(headers: Headers): Offered | null {
  const stamp = headers.get('x-slack-request-timestamp')?.trim() ?? ''
  const signature = headers.get('x-slack-signature')?.trim() ?? ''
  if (!UNIX_SECONDS.test(stamp) || !signature.startsWith('v0=')) return null
  const hex = signature.slice(3)
  return SHA256_HEX.test(hex) ? { timestamp: Number(stamp), signatures: [hex] } : null
}
