// Cron expressions of schedules and digests, always evaluated in an explicit IANA timezone.
//
// cron-dialect.ts checks the dialect (cronie's, SPEC §16) and rewrites it for croner, which finds
// the runs. Daylight saving follows cronie: a fixed time (minute and hour without `*` or a step)
// that does not exist that day runs once at the first minute after the gap, and one that happens
// twice runs once, the first time; expressions with a wildcard or a step in the minute or hour
// follow real minutes (croner's `fixedTimeRule: 'no-wildcard'`). "Due at minute m" is defined as
// "the first run after m - 1 s is m", so the due index, catch-up, backfill and digests can never
// disagree with `nextCronRun`. README.md beside this file says why croner, not cron-parser.
import { Cron } from 'croner'
import { readCron } from './cron-dialect.js'

const MINUTE_MS = 60_000

/** Jobs by expression + timezone: croner parses once; `nextRun` does not change the job. */
const jobs = new Map<string, Cron>()

/** Null when `expr` is a valid schedule expression; otherwise a message a non-programmer can act on. */
export function checkCronExpression(expr: string): string | null {
  const read = readCron(expr)
  return read.ok ? null : read.message
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

function jobFor(expr: string, timezone: string): Cron {
  const key = `${expr}\u0000${timezone}`
  let job = jobs.get(key)
  if (!job) {
    const read = readCron(expr)
    if (!read.ok) throw new Error(read.message)
    job = new Cron(read.plan.pattern, {
      timezone,
      mode: '5-part',
      domAndDow: read.plan.domAndDow,
      fixedTimeRule: 'no-wildcard',
      paused: true,
    })
    jobs.set(key, job)
  }
  return job
}

/** `at` floored to its minute (UTC; every zone offset in use is a whole number of minutes). */
export function floorToMinute(at: Date): Date {
  return new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS)
}

/** The first run strictly after `after`'s minute, or null when there is none (or `expr` is invalid). */
export function nextCronRun(expr: string, timezone: string, after: Date): Date | null {
  try {
    return jobFor(expr, timezone).nextRun(floorToMinute(after))
  } catch {
    return null
  }
}

/** True when the schedule is due at the minute of `at` (see the note at the top). */
export function cronMatches(expr: string, timezone: string, at: Date): boolean {
  const minute = floorToMinute(at).getTime()
  return nextCronRun(expr, timezone, new Date(minute - MINUTE_MS))?.getTime() === minute
}

/** Every minute in [from, to] (floored) at which the schedule is due, oldest first, at most `limit`. */
export function dueMinutesBetween(expr: string, timezone: string, from: Date, to: Date, limit = Number.POSITIVE_INFINITY): Date[] {
  const end = floorToMinute(to).getTime()
  const minutes: Date[] = []
  let next = nextCronRun(expr, timezone, new Date(floorToMinute(from).getTime() - MINUTE_MS))
  while (next !== null && next.getTime() <= end && minutes.length < limit) {
    minutes.push(next)
    next = nextCronRun(expr, timezone, next)
  }
  return minutes
}

const localFormats = new Map<string, Intl.DateTimeFormat>()

/** `at` as wall-clock time in `timezone` with its UTC offset: `2026-11-24 03:00 GMT+01:00` (abbreviations depend on the locale). */
export function formatInZone(at: Date, timezone: string): string {
  let format = localFormats.get(timezone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    })
    localFormats.set(timezone, format)
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((part) => [part.type, part.value]))
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${parts.timeZoneName}`
}
