// Text that no store can keep as sent: a NUL character (PostgreSQL's text and jsonb refuse it) or a
// lone UTF-16 surrogate (not Unicode; jsonb refuses its escape). Inputs holding one are a 400 at
// validation on every store, so a flow behaves the same on SQLite and PostgreSQL and no record is lost.

// eslint-disable-next-line no-control-regex
const SUSPECT = /[\u0000\uD800-\uDFFF]/
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const MAX_REPORTED = 5

/** What is wrong with a string, or null: NUL first, then a lone surrogate. */
function unstorableReason(text: string): string | null {
  if (!SUSPECT.test(text)) return null
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000), which cannot be stored'
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode), which cannot be stored'
  return null
}

/**
 * JSON text that can hold neither: no `\u0000` or `\uD8xx`–`\uDFxx` escape, and no raw NUL or
 * surrogate (emoji are pairs of surrogates: such a text is walked as before).
 */
// eslint-disable-next-line no-control-regex
const SUSPECT_JSON = /\\u(?:0000|[dD][89a-fA-F])|[\u0000\uD800-\uDFFF]/

/** Values parsed from JSON text that could not hold unstorable text (see markParsedJson). */
const knownStorable = new WeakSet<object>()

/**
 * Called with a value JSON.parse made and its text: when the text cannot hold unstorable text, the
 * value is not walked again. A regex over the text costs ~1 ms per MiB; the walk of a 1 MiB body with
 * 100,000 keys costs tens of milliseconds (SPEC §18: rejecting such a body stays cheap).
 */
export function markParsedJson(value: unknown, text: string): void {
  if (value !== null && typeof value === 'object' && !SUSPECT_JSON.test(text)) knownStorable.add(value)
}

/** `location/pointer: reason` for each string (or key) of `value` that cannot be stored, at most a few. */
export function unstorableTextErrors(location: string, value: unknown): string[] {
  if (value !== null && typeof value === 'object' && knownStorable.has(value)) return []
  const errors: string[] = []
  walk(value, [], (pointer, reason) => {
    if (errors.length < MAX_REPORTED) errors.push(`${location}${pointer}: ${reason}`)
  })
  return errors
}

/**
 * Checks every string and key. The path down to the current value is kept as raw segments and made
 * into a JSON pointer only for a report: every input is checked, and most hold nothing to report.
 */
function walk(value: unknown, path: (string | number)[], report: (pointer: string, reason: string) => void): void {
  if (typeof value === 'string') {
    const reason = unstorableReason(value)
    if (reason) report(pointerOf(path), reason)
    return
  }
  if (value === null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      path.push(index)
      walk(value[index], path, report)
      path.pop()
    }
    return
  }
  for (const key in value) {
    const keyReason = unstorableReason(key)
    // The key itself is shown escaped, so the message holds no NUL either.
    if (keyReason) report(`${pointerOf(path)}/${JSON.stringify(key).slice(1, -1)}`, `name ${keyReason}`)
    path.push(key)
    walk((value as Record<string, unknown>)[key], path, report)
    path.pop()
  }
}

/** A JSON pointer (RFC 6901) of raw path segments: `~` as `~0`, `/` as `~1`. */
function pointerOf(path: (string | number)[]): string {
  let pointer = ''
  for (const segment of path) pointer += `/${typeof segment === 'number' ? segment : segment.replace(/~/g, '~0').replace(/\//g, '~1')}`
  return pointer
}
