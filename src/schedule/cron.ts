// Cron expressions of schedules and digests: 5 fields (minute resolution) or a nickname, always
// evaluated in an explicit IANA timezone.
//
// "Due" means what SPEC §5.3 says: the minute, read as wall-clock time in the schedule's timezone,
// matches the fields. So across daylight saving a fixed time inside a spring-forward gap does not
// happen that day (02:30 Berlin on 2026-03-29 never exists) and a fixed time inside a fall-back
// overlap happens twice (02:30 Berlin on 2026-10-25 is both 00:30Z and 01:30Z); steps such as
// */15 keep running on real time. cron-parser's includesDate is that definition. Its next() does
// not always agree near an offset change (it shifts gap times and skips repeats), so `nextCronRun`
// uses next() only as a fast-forward and checks the minutes around each offset change itself.
import { createRequire } from 'node:module'
import type { CronExpression, CronExpressionParser as Parser } from 'cron-parser'
import { offsetChanges } from './zone.js'

// cron-parser (and luxon under it, ~40 ms to load) is CommonJS: required on first real use, so a
// load whose crons are all plainly valid (see `plainlyValid`) never loads it.
const require = createRequire(import.meta.url)
let parser: typeof Parser | undefined
const cronParser = (): typeof Parser => (parser ??= (require('cron-parser') as typeof import('cron-parser')).CronExpressionParser)

const MINUTE_MS = 60_000

/** Nicknames we accept, spelled out (cron-parser lacks @midnight and knows non-standard ones). */
const NICKNAMES: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
}

const FIELD_NAMES = 'minute hour day-of-month month day-of-week'

/** Parsed expressions by expression + timezone; each is reset before every use (single-threaded). */
const parsed = new Map<string, CronExpression>()

/** The 5-field form of an expression (nicknames expanded), or null when the field count is wrong. */
function fiveFields(expr: string): string | null {
  const trimmed = expr.trim()
  if (trimmed.startsWith('@')) return NICKNAMES[trimmed.toLowerCase()] ?? null
  const fields = trimmed.split(/\s+/).filter((f) => f !== '')
  return fields.length === 5 ? fields.join(' ') : null
}

/** Null when `expr` is a valid schedule expression; otherwise a message a non-programmer can act on. */
export function checkCronExpression(expr: string): string | null {
  const trimmed = expr.trim()
  const normalized = fiveFields(expr)
  if (normalized === null) {
    if (trimmed.startsWith('@')) {
      return `cron "${expr}" is not a known nickname; use one of ${Object.keys(NICKNAMES).join(', ')} or write 5 fields (${FIELD_NAMES})`
    }
    const count = trimmed === '' ? 0 : trimmed.split(/\s+/).length
    return `cron "${expr}" has ${count} field${count === 1 ? '' : 's'}; write 5 (${FIELD_NAMES}) or a nickname like @daily`
  }
  // `H` picks a value from a random seed per process: two processes would disagree on the minute.
  if (/(^|[\s,/-])H/.test(normalized)) return `cron "${expr}" uses "H" (hashed values), which is not supported; write the minute and hour explicitly`
  if (plainlyValid(normalized)) return null
  try {
    cronParser().parse(normalized, { tz: 'UTC' })
  } catch (error) {
    return `cron "${expr}" is not valid: ${(error as Error).message}`
  }
  return null
}

/** Lowest and highest value of each field; day of week 7 is Sunday, as 0. */
const FIELD_RANGES: readonly (readonly [number, number])[] = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]]
const PLAIN_PART = /^(?:\*|(\d{1,2})(?:-(\d{1,2}))?)(?:\/(\d{1,2}))?$/

/** True for 5 fields each of which is `*`, a number or a range in bounds, or a step (`a-b/n`,
 *  `*\/n`): cron-parser accepts these, so checking them needs no parser. Anything else (lists,
 *  names, L, #, `a/n`, a day of month with a month) is left to cron-parser;
 *  test/project/fast-paths.test.ts compares both. */
function plainlyValid(fields: string): boolean {
  const parts = fields.split(' ')
  if (parts[2] !== '*' && parts[3] !== '*') return false // a day that some months lack
  return parts.every((field, index) => {
    const [min, max] = FIELD_RANGES[index] as readonly [number, number]
    const match = PLAIN_PART.exec(field)
    if (!match) return false
    const [, from, to, step] = match
    if (from === undefined && to === undefined && step === undefined) return true // `*`
    if (from !== undefined && (Number(from) < min || Number(from) > max)) return false
    if (to !== undefined && (Number(to) < Number(from) || Number(to) > max)) return false
    if (step === undefined) return true
    return (from === undefined || to !== undefined) && Number(step) >= 1 && Number(step) <= max - min
  })
}

let timezones: Set<string> | undefined
const canonicalTimezones = (): Set<string> => (timezones ??= new Set(Intl.supportedValuesOf('timeZone')))

/** True for a timezone name the runtime knows (IANA, e.g. Europe/Berlin, or UTC). */
export function isValidTimezone(tz: string): boolean {
  if (tz.trim() === '') return false
  // The first Intl.DateTimeFormat costs ~30 ms (ICU start-up); the list of canonical names ~4 ms.
  if (tz === 'UTC' || canonicalTimezones().has(tz)) return true
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
    return true
  } catch {
    return false
  }
}

function expressionFor(expr: string, timezone: string): CronExpression {
  const key = `${expr}\u0000${timezone}`
  let expression = parsed.get(key)
  if (!expression) {
    const problem = checkCronExpression(expr)
    if (problem !== null) throw new Error(problem)
    expression = cronParser().parse(fiveFields(expr) as string, { tz: timezone })
    parsed.set(key, expression)
  }
  return expression
}

/** `at` floored to its minute (UTC; every zone offset in use is a whole number of minutes). */
export function floorToMinute(at: Date): Date {
  return new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS)
}

/** The first run strictly after `after` (floored to the minute), or null when there is none. */
export function nextCronRun(expr: string, timezone: string, after: Date): Date | null {
  try {
    const first = firstMatchFrom(expressionFor(expr, timezone), timezone, floorToMinute(after).getTime() + MINUTE_MS)
    return first === null ? null : new Date(first)
  } catch {
    return null
  }
}

/** True when the minute of `at`, read in `timezone`, matches the expression (see the note at the top). */
export function cronMatches(expr: string, timezone: string, at: Date): boolean {
  try {
    return expressionFor(expr, timezone).includesDate(floorToMinute(at))
  } catch {
    return false
  }
}

/** How far before `start` an offset change can still move minutes at or after `start` (DST: 1 hour). */
const MAX_SHIFT_MS = 3 * 60 * MINUTE_MS
/** Candidates that fall into a gap are skipped; more than this many in a row means "never". */
const MAX_CANDIDATES = 32

/** The first minute (epoch ms) at or after `from` that matches, by the definition of `cronMatches`. */
function firstMatchFrom(expression: CronExpression, timezone: string, from: number): number | null {
  const matches = (ms: number) => expression.includesDate(new Date(ms))
  let start = from
  for (let i = 0; i < MAX_CANDIDATES; i++) {
    expression.reset(new Date(start - MINUTE_MS))
    const candidate = floorToMinute(expression.next().toDate()).getTime()
    // Near an offset change next() may skip a repeated minute: scan those minutes one by one.
    for (const change of offsetChanges(timezone, start - MAX_SHIFT_MS, candidate)) {
      const width = (Math.abs(change.delta) + 1) * MINUTE_MS
      const end = Math.min(candidate, change.at + width)
      for (let minute = Math.max(start, change.at - width); minute < end; minute += MINUTE_MS) {
        if (matches(minute)) return minute
      }
    }
    if (candidate >= start && matches(candidate)) return candidate
    // A gap time shifted past the gap by next(): not a match by our definition; look further.
    start = Math.max(candidate, start) + MINUTE_MS
  }
  return null
}
