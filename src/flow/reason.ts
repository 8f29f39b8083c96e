// Failure reasons often quote what a caller sent; a reason is stored in history, shown on /status,
// /api/runs and the pages, sent in alerts and logged. SPEC §17 caps every one at 2,000 characters.

import type { Secrets } from '../model/project.js'
import { maskSecrets } from '../language/secrets.js'

export const MAX_REASON_CHARS = 2_000

/**
 * A failure reason masked and capped. Only the part that can be kept is masked (plus room for a
 * secret, or an encoded form of one, that starts inside it), so a reason quoting a megabyte of
 * input costs no more than a short one.
 */
export function maskedReason(reason: string, secrets: Secrets): string {
  let longest = 0
  for (const value of secrets.values()) longest = Math.max(longest, value.length)
  const room = MAX_REASON_CHARS + 4 * longest + 16
  if (reason.length <= room) return capReason(maskSecrets(reason, secrets))
  return capReason(maskSecrets(reason.slice(0, room), secrets), reason.length)
}

/**
 * The reason cut to MAX_REASON_CHARS, marker included. Cut after masking, so no secret is halved.
 * `fullLength`: the length of the whole reason when `reason` is already a prefix of it.
 */
export function capReason(reason: string, fullLength = reason.length): string {
  if (fullLength <= MAX_REASON_CHARS) return reason
  const marker = ` … (${fullLength - MAX_REASON_CHARS} more characters)`
  let cut = MAX_REASON_CHARS - marker.length
  // Never split a surrogate pair: a lone half is not valid text for JSON or PostgreSQL.
  const code = reason.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return reason.slice(0, cut) + marker
}

/** At most MAX_LISTED_ERRORS error strings, then `… and N more` (SPEC §17); each one capped too. */
const MAX_LISTED_ERRORS = 20
const MAX_ERROR_CHARS = 500

/**
 * The last line of an error list that could not be counted (a large invalid body, src/flow/input-errors.ts):
 * more errors were found than are listed, or the part of the body not checked may hold more.
 */
export const MORE_ERRORS = '… and more'
export const POSSIBLY_MORE_ERRORS = '… and possibly more'

export function capErrorList(errors: readonly string[]): string[] {
  const last = errors.at(-1)
  if (last === MORE_ERRORS || last === POSSIBLY_MORE_ERRORS) {
    const counted = capErrorList(errors.slice(0, -1))
    // Past the cap the listed ones already end with `… and N more`; uncounted, that is `… and more`.
    return counted.length > MAX_LISTED_ERRORS ? [...counted.slice(0, -1), MORE_ERRORS] : [...counted, last]
  }
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map((error) => (error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS - 1)}…` : error))
  if (errors.length > MAX_LISTED_ERRORS) listed.push(`… and ${errors.length - MAX_LISTED_ERRORS} more`)
  return listed
}
