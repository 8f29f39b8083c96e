// The cron dialect of schedules and digests (SPEC §16): Vixie cron / cronie's 5 fields, checked by us
// so that every rejected form gets a plain message (never a parser's wording), then rewritten into
// a plain numeric pattern for croner, which does the matching and the daylight-saving arithmetic.
//
// What we change on the way: names become numbers, wrap-around ranges (`FRI-MON`, `22-2`, which
// croner refuses) become lists, and cronie's day rule picks croner's `domAndDow`: when day-of-month
// and day-of-week are both restricted and neither starts with `*`, either may match; otherwise both.
// Extensions kept: `L` in day-of-month (last day), `<day>L` (last such weekday) and `<day>#<n>`.

/** What croner is given for one expression. */
interface CronPlan {
  /** 5 numeric fields croner understands. */
  pattern: string
  /** True when day-of-month and day-of-week must both match (cronie's rule, see above). */
  domAndDow: boolean
}

export type DialectResult = { ok: true; plan: CronPlan } | { ok: false; message: string }

/** Nicknames we accept, spelled out. */
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
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT']

interface Field {
  name: string
  min: number
  max: number
  /** Names standing for min, min + 1, ... */
  names?: readonly string[]
}

const FIELDS: readonly Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 0, max: 7, names: DAYS }, // 7 is Sunday, as 0
]

class DialectError extends Error {}

/** Checks `expr` and rewrites it for croner, or says in plain words what is wrong with it. */
export function readCron(expr: string): DialectResult {
  try {
    return { ok: true, plan: plan(expr) }
  } catch (error) {
    if (error instanceof DialectError) return { ok: false, message: `cron "${expr}" ${error.message}` }
    throw error
  }
}

function plan(expr: string): CronPlan {
  const trimmed = expr.trim()
  let fields: string[]
  if (trimmed.startsWith('@')) {
    const spelled = NICKNAMES[trimmed.toLowerCase()]
    if (spelled === undefined)
      throw new DialectError(`is not a known nickname; use one of ${Object.keys(NICKNAMES).join(', ')} or write 5 fields (${FIELD_NAMES})`)
    fields = spelled.split(' ')
  } else {
    fields = trimmed === '' ? [] : trimmed.split(/\s+/)
    if (fields.length !== 5) {
      const count = fields.length
      throw new DialectError(`has ${count} field${count === 1 ? '' : 's'}; write 5 (${FIELD_NAMES}) or a nickname like @daily`)
    }
  }
  const pattern = fields.map((text, i) => readField(text, FIELDS[i] as Field, i)).join(' ')
  const [, , dom, , dow] = fields as [string, string, string, string, string]
  return { pattern, domAndDow: dom.startsWith('*') || dow.startsWith('*') }
}

function readField(text: string, field: Field, index: number): string {
  const where = `in the ${field.name} field`
  // Jenkins-style hashed values (H, H/15, H(0-5)): every process would pick a different minute.
  if (text.split(',').some((item) => /^H($|[/(])/i.test(item))) {
    throw new DialectError(`uses "H" (hashed values) ${where}, which is not supported; write the value explicitly`)
  }
  if (text.includes('?')) throw new DialectError(`uses "?" ${where}, which is not supported; write * instead`)
  if (/\dW|^W$|LW/i.test(text)) throw new DialectError(`uses "W" (nearest weekday) ${where}, which is not supported; list the days instead`)
  return text
    .split(',')
    .map((item) => readItem(item, field, index, where))
    .join(',')
}

function readItem(item: string, field: Field, index: number, where: string): string {
  if (item === '') throw new DialectError(`has an empty list item ${where} (two commas in a row, or a comma at an end)`)
  if (index === 2 && /^L$/i.test(item)) return 'L'
  if (index === 4) {
    const nth = /^([^#]+)#(.*)$/.exec(item)
    if (nth) {
      const day = weekday(value(nth[1] as string, field, where), where)
      if (!/^[1-5]$/.test(nth[2] as string)) throw new DialectError(`has "${item}" ${where}: the number after # is which week of the month, 1 to 5`)
      return `${day}#${nth[2]}`
    }
    const last = /^(.+)L$/i.exec(item)
    if (last && !/^[A-Z]{3}$/i.test(item)) return `${weekday(value(last[1] as string, field, where), where)}L`
  }
  if (/L/i.test(item) && !(field.names && /^[A-Z]{3}(-[A-Z]{3})?(\/\d+)?$/i.test(item))) {
    throw new DialectError(`has "${item}" ${where}; L is allowed alone in the day-of-month field (last day) or after a weekday (5L: the last Friday)`)
  }
  const [range, stepText, extra] = item.split('/')
  if (extra !== undefined) throw new DialectError(`has "${item}" ${where}: a step is written once, like */15 or 0-30/5`)
  const step = stepText === undefined ? null : readStep(stepText, item, field, where)
  if (range === '*') return step === null ? '*' : `*/${step}`
  const dash = (range as string).indexOf('-', 1)
  if (dash < 0) {
    const single = value(range as string, field, where)
    if (step !== null) {
      throw new DialectError(
        `has "${item}" ${where}: a step needs a range; write ${single}-${field.max === 7 ? 6 : field.max}/${step} (every ${step} from ${single}) or */${step}`,
      )
    }
    return String(single)
  }
  const from = value((range as string).slice(0, dash), field, where)
  const to = value((range as string).slice(dash + 1), field, where)
  return expandRange(from, to, step ?? 1, field)
}

function readStep(text: string, item: string, field: Field, where: string): number {
  if (!/^\d+$/.test(text)) throw new DialectError(`has "${item}" ${where}: the step after / must be a whole number`)
  const step = Number(text)
  if (step < 1 || step > field.max) throw new DialectError(`has "${item}" ${where}: the step must be between 1 and ${field.max}`)
  return step
}

/** A number or (month, day-of-week) a three-letter name, within the field's bounds. */
function value(text: string, field: Field, where: string): number {
  if (/^\d+$/.test(text)) {
    const n = Number(text)
    if (n < field.min || n > field.max) throw new DialectError(`has ${text} ${where}, which goes from ${field.min} to ${field.max}`)
    return n
  }
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1
  if (named >= 0) return field.min + named
  if (field.names) throw new DialectError(`has "${text}" ${where}; use ${field.min}-${field.max} or a name like ${field.names[0]}, ${field.names[1]}`)
  throw new DialectError(`has "${text}" ${where}; use numbers ${field.min}-${field.max}, *, ranges (a-b), lists (a,b) and steps (*/n, a-b/n)`)
}

function weekday(day: number, where: string): number {
  if (day > 7) throw new DialectError(`has ${day} ${where}, which goes from 0 to 7`)
  return day === 7 ? 0 : day
}

/** `from-to/step`, as croner wants it: ranges that wrap around the field's end become lists. */
function expandRange(from: number, to: number, step: number, field: Field): string {
  const isWeekday = field.max === 7
  if (isWeekday && from === 7) from = 0
  if (from <= to) return step === 1 ? `${from}-${to}` : `${from}-${to}/${step}`
  // Wrap-around (cronie): from the start to the field's end, then on from its start; the step is
  // counted across the end. Sunday is the end of the week here (7 is 0).
  const top = isWeekday ? 6 : field.max
  const values: number[] = []
  const size = top - field.min + 1
  const length = top - from + 1 + (to - field.min + 1)
  for (let offset = 0; offset < length; offset += step) {
    values.push(field.min + ((from - field.min + offset) % size))
  }
  return values.join(',')
}
