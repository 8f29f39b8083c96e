// Small helpers both stores share: ids and ISO times.
import { randomBytes } from 'node:crypto'
import { FlowctlError } from '../errors.js'

// randomBytes per id costs ~3.5 µs (a call into the CSPRNG each time); slicing a 4 KiB pool of
// random bytes costs ~0.2 µs. Each byte is used once. Measured: removed in stop 25, the Run API
// served ~0.87–0.92× the req/s of stop 24's head; put back, 1.03× (bench/results.md, Stop 25).
const RANDOM_BYTES = 5
let pool = randomBytes(4096)
let offset = 0
let second = -1
let secondHex = ''
// Like an ObjectId's counter: starts at a random value, +1 per id, so ids made by one process within
// one second still sort in creation order (documents without a sort come back in insertion order).
let counter = randomBytes(3).readUIntBE(0, 3)

/**
 * A document id: 24 hex characters, the seconds since 1970 (8), a per-process counter (6), then
 * random (10), so ids sort by creation time like a MongoDB ObjectId. Time order matters for speed:
 * new keys land at the end of the primary-key index instead of on a random page each, which made
 * every group commit rewrite one index page per document.
 */
export function newDocumentId(now: number = Date.now()): string {
  if (offset + RANDOM_BYTES > pool.length) {
    pool = randomBytes(4096)
    offset = 0
  }
  const seconds = Math.floor(now / 1000)
  if (seconds !== second) {
    second = seconds
    secondHex = seconds.toString(16).padStart(8, '0')
  }
  counter = (counter + 1) & 0xffffff
  const id = secondHex + counter.toString(16).padStart(6, '0') + pool.toString('hex', offset, offset + RANDOM_BYTES)
  offset += RANDOM_BYTES
  return id
}

/**
 * The canonical ISO form (`2024-05-01T09:00:00.000Z`). Times are stored in this form so that
 * text order is time order in SQLite and both stores give back the same string.
 */
export function canonicalIso(value: string, what: string): string {
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw new FlowctlError('USAGE', `${what} is not a valid ISO time: "${value}"`)
  return date.toISOString()
}

/** Outbox ids are integers in both databases; anything else names no message. */
export function parseOutboxId(id: string): number | null {
  return /^[1-9][0-9]{0,14}$/.test(id) ? Number(id) : null
}
