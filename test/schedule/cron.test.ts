import { describe, expect, it } from 'vitest'
import { checkCronExpression, cronMatches, dueMinutesBetween, isValidTimezone, nextCronRun } from '../../src/language/cron.js'
import { DUE_TABLE, REJECT_TABLE } from './cronie-reference.js'

const MINUTE = 60_000

/** Every minute in [fromIso, toIso) at which the expression is due, as ISO strings. */
function matchesBetween(expr: string, tz: string, fromIso: string, toIso: string): string[] {
  const out: string[] = []
  for (let t = Date.parse(fromIso); t < Date.parse(toIso); t += MINUTE) {
    if (cronMatches(expr, tz, new Date(t))) out.push(new Date(t).toISOString())
  }
  return out
}

describe('checkCronExpression', () => {
  it('accepts 5 fields and the nicknames', () => {
    for (const expr of [
      '* * * * *',
      '*/15 * * * *',
      '0 9 * * 1-5',
      '0 12 29 2 *',
      ' 0  3 * * * ',
      '@yearly',
      '@annually',
      '@monthly',
      '@weekly',
      '@daily',
      '@midnight',
      '@hourly',
    ]) {
      expect(checkCronExpression(expr), expr).toBeNull()
    }
  })

  it('names the field count when it is not 5', () => {
    expect(checkCronExpression('* * *')).toBe('cron "* * *" has 3 fields; write 5 (minute hour day-of-month month day-of-week) or a nickname like @daily')
    expect(checkCronExpression('* * * * * *')).toMatch(/has 6 fields; write 5/)
    expect(checkCronExpression('')).toMatch(/has 0 fields/)
    expect(checkCronExpression('daily')).toMatch(/has 1 field;/)
  })

  it('refuses every form of the reference table with its own plain message', () => {
    for (const row of REJECT_TABLE) expect(checkCronExpression(row.expr), row.expr).toBe(row.message)
  })

  it("never passes a parser's own wording on", () => {
    for (const expr of ['0 0 31-32 * *', '0 0 * * FRI-FOO', '0 0-x * * *', '*/x * * * *', '0 0 * * 5#x', '0 0 * * #3', '0 0 1-L * *']) {
      expect(checkCronExpression(expr), expr).toMatch(new RegExp(`^cron ".*" (has|uses) `))
      expect(checkCronExpression(expr), expr).not.toMatch(/Constraint|NaN|Invalid|CronPattern|Syntax/)
    }
  })

  it("accepts cronie's forms and the extensions L and #", () => {
    for (const expr of [
      '0 0 * * FRI-SUN',
      '0 0 * * 5-0',
      '0 22-2 * * *',
      '0 0 L * *',
      '0 0 1,15,L * *',
      '0 0 * * 5#3',
      '0 0 * * MON#1',
      '0 0 * * 5L',
      '0 0 * jan-mar *',
      '5-59/15 * * * *',
    ]) {
      expect(checkCronExpression(expr), expr).toBeNull()
    }
  })

  it('rejects hashed values, which differ between processes', () => {
    expect(checkCronExpression('H * * * *')).toMatch(/"H"/)
    expect(checkCronExpression('0 H(0-5) * * *')).toMatch(/"H"/)
  })
})

describe('isValidTimezone', () => {
  it('knows IANA names and UTC, and nothing else', () => {
    expect(isValidTimezone('Europe/Berlin')).toBe(true)
    expect(isValidTimezone('America/New_York')).toBe(true)
    expect(isValidTimezone('UTC')).toBe(true)
    expect(isValidTimezone('Mars/Olympus')).toBe(false)
    expect(isValidTimezone('')).toBe(false)
  })
})

describe('the cronie reference table (test/schedule/cronie-reference.ts)', () => {
  it('has at least 40 rows of expressions x instants', () => {
    expect(DUE_TABLE.length + REJECT_TABLE.length).toBeGreaterThanOrEqual(40)
  })

  for (const row of DUE_TABLE) {
    it(`${row.expr} in ${row.tz} from ${row.from}Z: ${row.why} (${row.source})`, () => {
      const due = row.due.map((minute) => `${minute}:00.000Z`)
      const from = new Date(`${row.from}Z`)
      const to = new Date(Date.parse(`${row.to}Z`) - MINUTE)
      expect(dueMinutesBetween(row.expr, row.tz, from, to).map((d) => d.toISOString())).toEqual(due)
      // Minute by minute over windows of at most two days; elsewhere around each expected minute.
      if (to.getTime() - from.getTime() <= 2 * 24 * 60 * MINUTE) {
        expect(matchesBetween(row.expr, row.tz, from.toISOString(), `${row.to}Z`)).toEqual(due)
      } else {
        for (const minute of due) {
          expect(cronMatches(row.expr, row.tz, new Date(minute))).toBe(true)
          expect(cronMatches(row.expr, row.tz, new Date(Date.parse(minute) - MINUTE))).toBe(false)
          expect(cronMatches(row.expr, row.tz, new Date(Date.parse(minute) + MINUTE))).toBe(false)
        }
      }
    })
  }
})

describe('cronMatches', () => {
  it('floors to the minute (seconds and milliseconds do not matter)', () => {
    expect(cronMatches('0 10 * * *', 'UTC', new Date('2026-01-01T10:00:45.999Z'))).toBe(true)
    expect(cronMatches('0 10 * * *', 'UTC', new Date('2026-01-01T10:01:00.000Z'))).toBe(false)
    expect(cronMatches('0 10 * * *', 'UTC', new Date('2026-01-01T09:59:59.999Z'))).toBe(false)
  })

  it('reads the expression in the given timezone', () => {
    // 09:00 local: Berlin is UTC+1 in winter and UTC+2 in summer; New York UTC-5 / UTC-4; Kolkata UTC+5:30.
    expect(matchesBetween('0 9 * * *', 'Europe/Berlin', '2026-01-15T00:00Z', '2026-01-16T00:00Z')).toEqual(['2026-01-15T08:00:00.000Z'])
    expect(matchesBetween('0 9 * * *', 'Europe/Berlin', '2026-07-15T00:00Z', '2026-07-16T00:00Z')).toEqual(['2026-07-15T07:00:00.000Z'])
    expect(matchesBetween('0 9 * * *', 'America/New_York', '2026-01-15T00:00Z', '2026-01-16T00:00Z')).toEqual(['2026-01-15T14:00:00.000Z'])
    expect(matchesBetween('0 9 * * *', 'America/New_York', '2026-07-15T00:00Z', '2026-07-16T00:00Z')).toEqual(['2026-07-15T13:00:00.000Z'])
    expect(matchesBetween('0 9 * * *', 'Asia/Kolkata', '2026-07-15T00:00Z', '2026-07-16T00:00Z')).toEqual(['2026-07-15T03:30:00.000Z'])
    expect(matchesBetween('0 9 * * *', 'UTC', '2026-07-15T00:00Z', '2026-07-16T00:00Z')).toEqual(['2026-07-15T09:00:00.000Z'])
  })

  it('runs the example nightly cleanup (03:00 Berlin) once a day, in winter and summer', () => {
    expect(cronMatches('0 3 * * *', 'Europe/Berlin', new Date('2026-11-21T02:00:00Z'))).toBe(true)
    expect(cronMatches('0 3 * * *', 'Europe/Berlin', new Date('2026-11-21T03:00:00Z'))).toBe(false)
    expect(cronMatches('0 3 * * *', 'Europe/Berlin', new Date('2026-06-21T01:00:00Z'))).toBe(true)
  })

  it('agrees with nextCronRun minute by minute across both Berlin changes', () => {
    const exprs = ['30 2 * * *', '0 2 * * *', '59 1 * * *', '0 3 * * *', '*/7 * * * *', '15 1-3 * * *', '0 * * * *', '@daily']
    for (const [from, to] of [
      ['2026-03-28T22:00Z', '2026-03-29T04:00Z'],
      ['2026-10-24T22:00Z', '2026-10-25T04:00Z'],
    ] as const) {
      for (const expr of exprs) {
        const walked: string[] = []
        let next = nextCronRun(expr, 'Europe/Berlin', new Date(Date.parse(from) - MINUTE))
        while (next && next.getTime() < Date.parse(to)) {
          walked.push(next.toISOString())
          next = nextCronRun(expr, 'Europe/Berlin', next)
        }
        expect(walked, `${expr} from ${from}`).toEqual(matchesBetween(expr, 'Europe/Berlin', from, to))
      }
    }
  })

  it('expands nicknames in the timezone', () => {
    expect(matchesBetween('@daily', 'Europe/Berlin', '2026-07-14T12:00Z', '2026-07-15T12:00Z')).toEqual(['2026-07-14T22:00:00.000Z'])
    expect(matchesBetween('@midnight', 'UTC', '2026-07-14T12:00Z', '2026-07-15T12:00Z')).toEqual(['2026-07-15T00:00:00.000Z'])
    expect(matchesBetween('@hourly', 'Asia/Kolkata', '2026-07-14T12:00Z', '2026-07-14T14:00Z')).toEqual([
      '2026-07-14T12:30:00.000Z',
      '2026-07-14T13:30:00.000Z',
    ])
    // 2026-07-19 is a Sunday.
    expect(cronMatches('@weekly', 'UTC', new Date('2026-07-19T00:00Z'))).toBe(true)
    expect(cronMatches('@weekly', 'UTC', new Date('2026-07-20T00:00Z'))).toBe(false)
    expect(cronMatches('@monthly', 'UTC', new Date('2026-08-01T00:00Z'))).toBe(true)
    expect(cronMatches('@yearly', 'America/New_York', new Date('2027-01-01T05:00Z'))).toBe(true)
    expect(cronMatches('@annually', 'UTC', new Date('2027-01-01T05:00Z'))).toBe(false)
  })

  it('runs "0 12 29 2 *" on 29 February 2028 and not in 2027', () => {
    expect(cronMatches('0 12 29 2 *', 'UTC', new Date('2028-02-29T12:00:00Z'))).toBe(true)
    expect(cronMatches('0 12 29 2 *', 'UTC', new Date('2027-02-28T12:00:00Z'))).toBe(false)
    expect(cronMatches('0 12 29 2 *', 'UTC', new Date('2027-03-01T12:00:00Z'))).toBe(false)
    expect(nextCronRun('0 12 29 2 *', 'UTC', new Date('2027-01-01T00:00:00Z'))?.toISOString()).toBe('2028-02-29T12:00:00.000Z')
  })

  it('is false, never a throw, for an invalid expression or timezone', () => {
    expect(cronMatches('* * *', 'UTC', new Date('2026-01-01T00:00Z'))).toBe(false)
    expect(cronMatches('* * * * *', 'Mars/Olympus', new Date('2026-01-01T00:00Z'))).toBe(false)
  })
})

describe('nextCronRun', () => {
  it('is strictly after the minute of `after`', () => {
    expect(nextCronRun('* * * * *', 'UTC', new Date('2026-01-01T10:00:00Z'))?.toISOString()).toBe('2026-01-01T10:01:00.000Z')
    expect(nextCronRun('* * * * *', 'UTC', new Date('2026-01-01T10:00:59.999Z'))?.toISOString()).toBe('2026-01-01T10:01:00.000Z')
    expect(nextCronRun('0 10 * * *', 'UTC', new Date('2026-01-01T10:00:00Z'))?.toISOString()).toBe('2026-01-02T10:00:00.000Z')
    expect(nextCronRun('0 3 * * *', 'Europe/Berlin', new Date('2026-11-20T12:00:00Z'))?.toISOString()).toBe('2026-11-21T02:00:00.000Z')
  })

  it('is null for an invalid expression', () => {
    expect(nextCronRun('61 * * * *', 'UTC', new Date('2026-01-01T00:00Z'))).toBeNull()
  })
})
