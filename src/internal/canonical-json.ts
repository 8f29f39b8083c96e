// One canonical form of a JSON value: object keys in PostgreSQL's jsonb order, deeply. SQLite stores
// documents in this form (text equality is then value equality, and both stores give documents back
// with the same key order), and an idempotency fingerprint hashes it (key order does not matter).
import { compareText } from './compare.js'

// eslint-disable-next-line no-control-regex -- every ASCII character, controls included
const ASCII = /^[\x00-\x7f]*$/

/**
 * Shorter keys first, then by UTF-8 bytes: PostgreSQL's jsonb key order. ASCII keys (nearly all)
 * compare as they are: their length is their byte length and code unit order is byte order.
 */
export function compareJsonbKeys(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a.length - b.length || compareText(a, b)
  return Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b))
}

/** The value with object keys in jsonb order, deeply; `undefined` properties are left out, as JSON does. */
export function canonicalJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalJson)
  if (value === null || typeof value !== 'object') return value
  const source = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(source).sort(compareJsonbKeys)) {
    if (source[key] !== undefined) out[key] = canonicalJson(source[key])
  }
  return out
}
