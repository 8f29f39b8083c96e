// What both stores share about times and outbox ids. Document and run ids are made in
// src/internal/ids.ts.
import { FlowctlError } from '../errors.js'
import { isCanonicalOfThisMinute } from '../internal/iso-time.js'

/**
 * The canonical ISO form (`2024-05-01T09:00:00.000Z`). Times are stored in this form so that
 * text order is time order in SQLite and both stores give back the same string.
 */
export function canonicalIso(value: string, what: string): string {
  // A run's own start time, made by isoTime a moment ago: already canonical.
  if (isCanonicalOfThisMinute(value)) return value
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw new FlowctlError('USAGE', `${what} is not a valid ISO time: "${value}"`)
  return date.toISOString()
}

/** Outbox ids are integers in both databases; anything else names no message. */
export function parseOutboxId(id: string): number | null {
  return /^[1-9][0-9]{0,14}$/.test(id) ? Number(id) : null
}
