// What both stores share about times and outbox ids. Document and run ids are made in
// src/internal/ids.ts.
import { FlowctlError } from '../errors.js'

/**
 * The canonical ISO form (`2024-05-01T09:00:00.000Z`). Times are stored in this form so that
 * text order is time order in SQLite and both stores give back the same string.
 */
export function canonicalIso(value: string, what: string): string {
  // Most values are canonical already (every run's startedAt): checked without formatting a Date,
  // which costs ~5,000 instructions (about 2% of a Run API request's).
  if (isCanonicalIso(value)) return value
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw new FlowctlError('USAGE', `${what} is not a valid ISO time: "${value}"`)
  return date.toISOString()
}

const CANONICAL_ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{3}Z$/
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Whether `value` is what `new Date(value).toISOString()` gives back (a real day and time of that shape). */
export function isCanonicalIso(value: string): boolean {
  const parts = CANONICAL_ISO.exec(value)
  if (!parts) return false
  const year = Number(parts[1])
  const month = Number(parts[2])
  const day = Number(parts[3])
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const days = month === 2 && leap ? 29 : MONTH_DAYS[month - 1]
  return days !== undefined && day >= 1 && day <= days && Number(parts[4]) <= 23 && Number(parts[5]) <= 59 && Number(parts[6]) <= 59
}

/** Outbox ids are integers in both databases; anything else names no message. */
export function parseOutboxId(id: string): number | null {
  return /^[1-9][0-9]{0,14}$/.test(id) ? Number(id) : null
}
