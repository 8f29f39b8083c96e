// Failure reasons often quote what a caller sent; a reason is stored in history, shown on /status,
// /api/runs and the pages, sent in alerts and logged. SPEC §17 caps every one at 2,000 characters.

export const MAX_REASON_CHARS = 2_000

/** The reason cut to MAX_REASON_CHARS, marker included. Cut after masking, so no secret is halved. */
export function capReason(reason: string): string {
  if (reason.length <= MAX_REASON_CHARS) return reason
  const marker = ` … (${reason.length - MAX_REASON_CHARS} more characters)`
  let cut = MAX_REASON_CHARS - marker.length
  // Never split a surrogate pair: a lone half is not valid text for JSON or PostgreSQL.
  const code = reason.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return reason.slice(0, cut) + marker
}

/** At most MAX_LISTED_ERRORS error strings, then `… and N more` (SPEC §17); each one capped too. */
export const MAX_LISTED_ERRORS = 20
const MAX_ERROR_CHARS = 500

export function capErrorList(errors: readonly string[]): string[] {
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map((error) => (error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS - 1)}…` : error))
  if (errors.length > MAX_LISTED_ERRORS) listed.push(`… and ${errors.length - MAX_LISTED_ERRORS} more`)
  return listed
}
