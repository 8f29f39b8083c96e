import { describe, expect, it } from 'vitest'
import { checkCronExpression, cronMatches, isValidTimezone, nextCronRun } from '../../src/schedule/cron.js'

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
    for (const expr of ['* * * * *', '*/15 * * * *', '0 9 * * 1-5', '0 12 29 2 *', ' 0  3 * * * ', '@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']) {
      expect(checkCronExpression(expr), expr).toBeNull()
    }
  })

  it('names the field count when it is not 5', () => {
    expect(checkCronExpression('* * *')).toBe('cron "* * *" has 3 fields; write 5 (minute hour day-of-month month day-of-week) or a nickname like @daily')
    expect(checkCronExpression('* * * * * *')).toMatch(/has 6 fields; write 5/)
    expect(checkCronExpression('')).toMatch(/has 0 fields/)
    expect(checkCronExpression('daily')).toMatch(/has 1 field;/)
  })

  it('rejects unknown nicknames and what cron-parser rejects, with its reason', () => {
    expect(checkCronExpression('@reboot')).toMatch(/not a known nickname.*@daily/)
    expect(checkCronExpression('@secondly')).toMatch(/not a known nickname/)
    expect(checkCronExpression('61 * * * *')).toMatch(/^cron "61 \* \* \* \*" is not valid: .*59/)
    expect(checkCronExpression('* 24 * * *')).toMatch(/is not valid: .*23/)
    expect(checkCronExpression('abc * * * *')).toMatch(/is not valid: .*abc/)
    expect(checkCronExpression('0 12 31 2 *')).toMatch(/is not valid/)
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

  // Wall-clock semantics (SPEC §5.3: "matches the current minute in its timezone"): a local time that
  // does not exist that day does not run; a local time that happens twice runs twice.
  describe('Europe/Berlin, spring forward on 2026-03-29 (02:00 CET → 03:00 CEST at 01:00Z)', () => {
    const day = ['2026-03-28T23:00Z', '2026-03-29T22:00Z'] as const // the local day: 23 hours

    it('a fixed time inside the gap does not exist, so it does not run that day', () => {
      expect(matchesBetween('30 2 * * *', 'Europe/Berlin', ...day)).toEqual([])
      expect(matchesBetween('0 2 * * *', 'Europe/Berlin', ...day)).toEqual([])
      expect(nextCronRun('30 2 * * *', 'Europe/Berlin', new Date('2026-03-28T12:00Z'))?.toISOString()).toBe('2026-03-30T00:30:00.000Z')
    })

    it('fixed times outside the gap keep their local time', () => {
      expect(matchesBetween('0 3 * * *', 'Europe/Berlin', ...day)).toEqual(['2026-03-29T01:00:00.000Z'])
      expect(matchesBetween('59 1 * * *', 'Europe/Berlin', ...day)).toEqual(['2026-03-29T00:59:00.000Z'])
      expect(matchesBetween('0 12 * * *', 'Europe/Berlin', ...day)).toEqual(['2026-03-29T10:00:00.000Z'])
    })

    it('steps keep running on real time: a 23-hour day has 92 quarter hours', () => {
      const quarters = matchesBetween('*/15 * * * *', 'Europe/Berlin', ...day)
      expect(quarters).toHaveLength(92)
      expect(quarters).toContain('2026-03-29T00:45:00.000Z')
      expect(quarters).toContain('2026-03-29T01:00:00.000Z')
      expect(matchesBetween('0 * * * *', 'Europe/Berlin', ...day)).toHaveLength(23)
    })
  })

  describe('Europe/Berlin, fall back on 2026-10-25 (03:00 CEST → 02:00 CET at 01:00Z)', () => {
    const day = ['2026-10-24T22:00Z', '2026-10-25T23:00Z'] as const // the local day: 25 hours

    it('a fixed time inside the repeated hour happens twice, so it runs twice', () => {
      expect(matchesBetween('30 2 * * *', 'Europe/Berlin', ...day)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z'])
      expect(nextCronRun('30 2 * * *', 'Europe/Berlin', new Date('2026-10-25T00:30Z'))?.toISOString()).toBe('2026-10-25T01:30:00.000Z')
      expect(matchesBetween('0 3 * * *', 'Europe/Berlin', ...day)).toEqual(['2026-10-25T02:00:00.000Z'])
    })

    it('steps keep running on real time through both passes: a 25-hour day has 100 quarter hours', () => {
      expect(matchesBetween('*/15 * * * *', 'Europe/Berlin', ...day)).toHaveLength(100)
      expect(matchesBetween('0 * * * *', 'Europe/Berlin', ...day)).toHaveLength(25)
    })
  })

  describe('America/New_York', () => {
    it('spring forward on 2026-03-08 (02:00 EST → 03:00 EDT at 07:00Z)', () => {
      expect(matchesBetween('30 2 * * *', 'America/New_York', '2026-03-08T05:00Z', '2026-03-09T04:00Z')).toEqual([])
      expect(matchesBetween('30 3 * * *', 'America/New_York', '2026-03-08T05:00Z', '2026-03-09T04:00Z')).toEqual(['2026-03-08T07:30:00.000Z'])
      expect(matchesBetween('0 9 * * *', 'America/New_York', '2026-03-08T05:00Z', '2026-03-09T04:00Z')).toEqual(['2026-03-08T13:00:00.000Z'])
    })

    it('fall back on 2026-11-01 (02:00 EDT → 01:00 EST at 06:00Z)', () => {
      expect(matchesBetween('30 1 * * *', 'America/New_York', '2026-11-01T04:00Z', '2026-11-02T05:00Z')).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z'])
      expect(matchesBetween('*/30 * * * *', 'America/New_York', '2026-11-01T04:00Z', '2026-11-02T05:00Z')).toHaveLength(50)
    })
  })

  it('agrees with nextCronRun minute by minute across both Berlin changes', () => {
    const exprs = ['30 2 * * *', '0 2 * * *', '59 1 * * *', '0 3 * * *', '*/7 * * * *', '15 1-3 * * *', '0 * * * *', '@daily']
    for (const [from, to] of [['2026-03-28T22:00Z', '2026-03-29T04:00Z'], ['2026-10-24T22:00Z', '2026-10-25T04:00Z']] as const) {
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
    expect(matchesBetween('@hourly', 'Asia/Kolkata', '2026-07-14T12:00Z', '2026-07-14T14:00Z')).toEqual(['2026-07-14T12:30:00.000Z', '2026-07-14T13:30:00.000Z'])
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
