// Small helpers both stores share: ids and ISO times.
import { randomBytes } from 'node:crypto'
import { FlowctlError } from '../errors.js'

// randomBytes per id costs ~3.5 µs (a call into the CSPRNG each time); slicing a 4 KiB pool of
// random bytes costs ~0.2 µs (randomUUID ~0.26 µs, but a different shape). Each byte is used once.
const ID_BYTES = 12
let pool = randomBytes(4096)
let offset = 0

/** A document id: 24 hex characters, like a MongoDB ObjectId in shape (not in meaning). */
export function newDocumentId(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(4096)
    offset = 0
  }
  const id = pool.toString('hex', offset, offset + ID_BYTES)
  offset += ID_BYTES
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
