// UTC offsets of a timezone and the instants where they change (daylight saving), found with Intl.
const MINUTE_MS = 60_000
const DAY_MS = 24 * 60 * MINUTE_MS

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    })
    formatters.set(timezone, formatter)
  }
  return formatter
}

/** The zone's offset from UTC at `ms`, in minutes (Berlin in summer: 120). */
export function offsetMinutes(timezone: string, ms: number): number {
  const parts: Record<string, number> = {}
  for (const part of formatterFor(timezone).formatToParts(new Date(ms))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value)
  }
  const local = Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0)
  return Math.round((local - Math.floor(ms / MINUTE_MS) * MINUTE_MS) / MINUTE_MS)
}

export interface OffsetChange {
  /** First minute (epoch ms) with the new offset. */
  at: number
  /** New offset minus old offset, in minutes (+60 in spring, -60 in autumn). */
  delta: number
}

const WEEK_MS = 7 * DAY_MS
const changesByYear = new Map<string, OffsetChange[]>()

/**
 * The zone's offset changes in one UTC year, computed once: weekly samples (real zones never change
 * twice within a week), each change bisected to the minute.
 */
function changesOfYear(timezone: string, year: number): OffsetChange[] {
  const key = `${timezone}\u0000${year}`
  let changes = changesByYear.get(key)
  if (changes) return changes
  changes = []
  const yearEnd = Date.UTC(year + 1, 0, 1)
  let start = Date.UTC(year, 0, 1) - MINUTE_MS // a change exactly at New Year is seen too
  let startOffset = offsetMinutes(timezone, start)
  while (start < yearEnd) {
    const end = Math.min(start + WEEK_MS, yearEnd)
    const endOffset = offsetMinutes(timezone, end)
    if (endOffset !== startOffset) {
      let low = start // offset here is startOffset
      let high = end // offset here is endOffset
      while (high - low > MINUTE_MS) {
        const middle = low + Math.floor((high - low) / MINUTE_MS / 2) * MINUTE_MS
        if (offsetMinutes(timezone, middle) === startOffset) low = middle
        else high = middle
      }
      changes.push({ at: high, delta: endOffset - startOffset })
    }
    start = end
    startOffset = endOffset
  }
  changesByYear.set(key, changes)
  return changes
}

/** Offset changes in (from, to], both minute epochs. */
export function offsetChanges(timezone: string, from: number, to: number): OffsetChange[] {
  const changes: OffsetChange[] = []
  const lastYear = new Date(to).getUTCFullYear()
  for (let year = new Date(from).getUTCFullYear(); year <= lastYear; year++) {
    for (const change of changesOfYear(timezone, year)) {
      if (change.at > from && change.at <= to) changes.push(change)
    }
  }
  return changes
}
