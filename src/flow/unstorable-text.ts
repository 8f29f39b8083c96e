// Text that no store can keep as sent: a NUL character (PostgreSQL's text and jsonb refuse it) or a
// lone UTF-16 surrogate (not Unicode; jsonb refuses its escape). Inputs holding one are a 400 at
// validation on every store, so a flow behaves the same on SQLite and PostgreSQL and no record is lost.

// eslint-disable-next-line no-control-regex
const SUSPECT = /[\u0000\uD800-\uDFFF]/
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const MAX_REPORTED = 5

/** What is wrong with a string, or null: NUL first, then a lone surrogate. */
export function unstorableReason(text: string): string | null {
  if (!SUSPECT.test(text)) return null
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000), which cannot be stored'
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode), which cannot be stored'
  return null
}

/** `location/pointer: reason` for each string (or key) of `value` that cannot be stored, at most a few. */
export function unstorableTextErrors(location: string, value: unknown): string[] {
  // Every input is checked: most hold nothing suspect, and finding that builds no pointers.
  if (!holdsSuspect(value)) return []
  const errors: string[] = []
  walk(value, '', (pointer, reason) => {
    if (errors.length < MAX_REPORTED) errors.push(`${location}${pointer}: ${reason}`)
  })
  return errors
}

/** Whether any string or key inside `value` has a NUL or a surrogate (a cheap test before `walk`). */
function holdsSuspect(value: unknown): boolean {
  if (typeof value === 'string') return SUSPECT.test(value)
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return value.some(holdsSuspect)
  for (const key in value) if (SUSPECT.test(key) || holdsSuspect((value as Record<string, unknown>)[key])) return true
  return false
}

function walk(value: unknown, pointer: string, report: (pointer: string, reason: string) => void): void {
  if (typeof value === 'string') {
    const reason = unstorableReason(value)
    if (reason) report(pointer, reason)
    return
  }
  if (value === null || typeof value !== 'object') return
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, `${pointer}/${index}`, report))
    return
  }
  for (const [key, item] of Object.entries(value)) {
    const child = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`
    const keyReason = unstorableReason(key)
    // The key itself is shown escaped, so the message holds no NUL either.
    if (keyReason) report(`${pointer}/${JSON.stringify(key).slice(1, -1)}`, `name ${keyReason}`)
    walk(item, child, report)
  }
}
