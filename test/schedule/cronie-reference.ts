// The reference table for flowctl's cron dialect and daylight-saving rules (SPEC §16).
//
// Source. cronie (https://github.com/cronie-crond/cronie) could not be run here (Debian's archive on
// this machine has no `cronie` package), so the expected runs were worked out by hand from cronie's
// documented rules and code paths, not produced by a cronie binary:
// - crontab(5) of cronie: 5 fields, names, ranges, lists, steps; "if both fields are restricted
//   (i.e., do not start with *), the command will be run when either field matches the current
//   time"; otherwise both must match.
// - cron.c, the main loop (the `wakeupKind` cases): when the clock jumps forward by less than 5 hours
//   (spring forward), crond runs the fixed-time jobs of every skipped minute at once, and wildcard
//   jobs only for the current minute; when it jumps back by less than 3 hours (fall back), it runs
//   only wildcard jobs until the clock catches up, so fixed-time jobs run once. entry.c marks a job
//   wildcard (MIN_STAR / HR_STAR) when its minute or hour field starts with `*`.
// - Wrap-around ranges (`FRI-SUN`, `22-2`) as SPEC §16 describes cronie.
// Rows marked `ext` are SPEC §16's extensions that cronie lacks (`L`, `<day>L`, `<day>#<n>`); their
// expected runs follow the usual meaning (Quartz, croner). Rows marked `flowctl` are where flowctl
// deliberately differs from cronie, with the reason. Times: the UTC minutes at which a run is due in
// the window [from, to). 2026 offset changes: Berlin 03-29 01:00Z (+1 → +2) and 10-25 01:00Z (+2 → +1);
// New York 03-08 07:00Z (-5 → -4) and 11-01 06:00Z (-4 → -5); Asia/Kolkata is +05:30 all year.

export interface DueRow {
  expr: string
  tz: string
  from: string
  to: string
  /** UTC minutes, `YYYY-MM-DDTHH:MM`. */
  due: string[]
  source: 'cronie' | 'ext' | 'flowctl'
  why: string
}

const B = 'Europe/Berlin'
const NY = 'America/New_York'
const IN = 'Asia/Kolkata'
const U = 'UTC'

export const DUE_TABLE: DueRow[] = [
  // Berlin, spring forward (local 02:00-02:59 on 2026-03-29 does not exist; the local day is 03-28T23:00Z..03-29T22:00Z)
  {
    expr: '0 2 * * *',
    tz: B,
    from: '2026-03-28T23:00',
    to: '2026-03-29T22:00',
    due: ['2026-03-29T01:00'],
    source: 'cronie',
    why: 'fixed time in the gap runs at 03:00, the first minute after it',
  },
  {
    expr: '30 2 * * *',
    tz: B,
    from: '2026-03-28T23:00',
    to: '2026-03-29T22:00',
    due: ['2026-03-29T01:00'],
    source: 'cronie',
    why: 'fixed time in the gap runs at 03:00',
  },
  { expr: '0 3 * * *', tz: B, from: '2026-03-28T23:00', to: '2026-03-29T22:00', due: ['2026-03-29T01:00'], source: 'cronie', why: '03:00 CEST exists' },
  {
    expr: '0 2-3 * * *',
    tz: B,
    from: '2026-03-28T23:00',
    to: '2026-03-29T22:00',
    due: ['2026-03-29T01:00'],
    source: 'flowctl',
    why: 'cronie would start it twice at 03:00 (once for 02:00, once for 03:00); SPEC §16 runs it once per minute',
  },
  {
    expr: '30 * * * *',
    tz: B,
    from: '2026-03-28T23:00',
    to: '2026-03-29T03:00',
    due: ['2026-03-28T23:30', '2026-03-29T00:30', '2026-03-29T01:30', '2026-03-29T02:30'],
    source: 'cronie',
    why: 'wildcard hour follows real minutes: no 02:30 that day',
  },
  {
    expr: '*/30 2 * * *',
    tz: B,
    from: '2026-03-28T23:00',
    to: '2026-03-29T22:00',
    due: [],
    source: 'cronie',
    why: 'minute starts with * (wildcard job): the gap minutes never come',
  },
  {
    expr: '0 */2 * * *',
    tz: B,
    from: '2026-03-28T23:00',
    to: '2026-03-29T04:00',
    due: ['2026-03-28T23:00', '2026-03-29T02:00'],
    source: 'cronie',
    why: 'step hour follows real time: 00:00, (02:00 missing), 04:00 local',
  },
  // Berlin, fall back (local 02:00-02:59 on 2026-10-25 happens at 00:xxZ and again at 01:xxZ)
  {
    expr: '0 2 * * *',
    tz: B,
    from: '2026-10-24T22:00',
    to: '2026-10-25T23:00',
    due: ['2026-10-25T00:00'],
    source: 'cronie',
    why: 'fixed time that happens twice runs the first time',
  },
  {
    expr: '30 2 * * *',
    tz: B,
    from: '2026-10-24T22:00',
    to: '2026-10-25T23:00',
    due: ['2026-10-25T00:30'],
    source: 'cronie',
    why: 'fixed time that happens twice runs the first time',
  },
  {
    expr: '0 2-3 * * *',
    tz: B,
    from: '2026-10-24T22:00',
    to: '2026-10-25T23:00',
    due: ['2026-10-25T00:00', '2026-10-25T02:00'],
    source: 'cronie',
    why: 'a range is a fixed time: 02:00 once, then 03:00 CET',
  },
  {
    expr: '30 * * * *',
    tz: B,
    from: '2026-10-24T23:00',
    to: '2026-10-25T03:00',
    due: ['2026-10-24T23:30', '2026-10-25T00:30', '2026-10-25T01:30', '2026-10-25T02:30'],
    source: 'cronie',
    why: 'wildcard hour follows real minutes: 02:30 runs in both passes',
  },
  {
    expr: '*/20 2 * * *',
    tz: B,
    from: '2026-10-25T00:00',
    to: '2026-10-25T02:00',
    due: ['2026-10-25T00:00', '2026-10-25T00:20', '2026-10-25T00:40', '2026-10-25T01:00', '2026-10-25T01:20', '2026-10-25T01:40'],
    source: 'cronie',
    why: 'wildcard minute: both passes of 02:xx',
  },
  // New York, spring forward (02:00-02:59 EST on 2026-03-08 does not exist)
  {
    expr: '0 2 * * *',
    tz: NY,
    from: '2026-03-08T05:00',
    to: '2026-03-09T04:00',
    due: ['2026-03-08T07:00'],
    source: 'cronie',
    why: 'fixed time in the gap runs at 03:00 EDT',
  },
  {
    expr: '30 2 * * *',
    tz: NY,
    from: '2026-03-08T05:00',
    to: '2026-03-09T04:00',
    due: ['2026-03-08T07:00'],
    source: 'cronie',
    why: 'fixed time in the gap runs at 03:00 EDT',
  },
  {
    expr: '59 1 * * *',
    tz: NY,
    from: '2026-03-08T05:00',
    to: '2026-03-09T04:00',
    due: ['2026-03-08T06:59'],
    source: 'cronie',
    why: '01:59 EST exists, just before the gap',
  },
  {
    expr: '15 * * * *',
    tz: NY,
    from: '2026-03-08T05:00',
    to: '2026-03-08T09:00',
    due: ['2026-03-08T05:15', '2026-03-08T06:15', '2026-03-08T07:15', '2026-03-08T08:15'],
    source: 'cronie',
    why: 'wildcard hour: 00:15, 01:15, (02:15 missing), 03:15, 04:15 local',
  },
  // New York, fall back (01:00-01:59 on 2026-11-01 happens at 05:xxZ EDT and again at 06:xxZ EST)
  {
    expr: '30 1 * * *',
    tz: NY,
    from: '2026-11-01T04:00',
    to: '2026-11-02T05:00',
    due: ['2026-11-01T05:30'],
    source: 'cronie',
    why: 'fixed time that happens twice runs the first time',
  },
  {
    expr: '0 1 * * *',
    tz: NY,
    from: '2026-11-01T04:00',
    to: '2026-11-02T05:00',
    due: ['2026-11-01T05:00'],
    source: 'cronie',
    why: 'fixed time that happens twice runs the first time',
  },
  {
    expr: '0 2 * * *',
    tz: NY,
    from: '2026-11-01T04:00',
    to: '2026-11-02T05:00',
    due: ['2026-11-01T07:00'],
    source: 'cronie',
    why: '02:00 happens once (02:00 EDT became 01:00 EST)',
  },
  {
    expr: '15 * * * *',
    tz: NY,
    from: '2026-11-01T04:00',
    to: '2026-11-01T08:00',
    due: ['2026-11-01T04:15', '2026-11-01T05:15', '2026-11-01T06:15', '2026-11-01T07:15'],
    source: 'cronie',
    why: 'wildcard hour: 01:15 in both passes',
  },
  {
    expr: '*/30 1 * * *',
    tz: NY,
    from: '2026-11-01T04:00',
    to: '2026-11-01T08:00',
    due: ['2026-11-01T05:00', '2026-11-01T05:30', '2026-11-01T06:00', '2026-11-01T06:30'],
    source: 'cronie',
    why: 'wildcard minute: both passes of 01:xx',
  },
  // A zone without daylight saving, on Berlin's change days
  { expr: '0 2 * * *', tz: IN, from: '2026-03-28T18:30', to: '2026-03-29T18:30', due: ['2026-03-28T20:30'], source: 'cronie', why: 'IST is +05:30 all year' },
  { expr: '30 2 * * *', tz: IN, from: '2026-10-24T18:30', to: '2026-10-25T18:30', due: ['2026-10-24T21:00'], source: 'cronie', why: 'IST is +05:30 all year' },
  {
    expr: '0 * * * *',
    tz: IN,
    from: '2026-10-25T00:00',
    to: '2026-10-25T03:00',
    due: ['2026-10-25T00:30', '2026-10-25T01:30', '2026-10-25T02:30'],
    source: 'cronie',
    why: 'hours of a half-hour zone fall on :30 UTC',
  },
  // Day of month and day of week (November 2026: the 1st is a Sunday)
  {
    expr: '0 0 */2 * MON',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-12-01T00:00',
    due: ['2026-11-09T00:00', '2026-11-23T00:00'],
    source: 'cronie',
    why: 'day-of-month starts with *: odd days AND Mondays',
  },
  {
    expr: '0 0 1,15 * MON',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-12-01T00:00',
    due: ['2026-11-01T00:00', '2026-11-02T00:00', '2026-11-09T00:00', '2026-11-15T00:00', '2026-11-16T00:00', '2026-11-23T00:00', '2026-11-30T00:00'],
    source: 'cronie',
    why: 'both restricted, neither starts with *: either',
  },
  {
    expr: '0 0 1-7 * FRI',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-12-01T00:00',
    due: [
      '2026-11-01T00:00',
      '2026-11-02T00:00',
      '2026-11-03T00:00',
      '2026-11-04T00:00',
      '2026-11-05T00:00',
      '2026-11-06T00:00',
      '2026-11-07T00:00',
      '2026-11-13T00:00',
      '2026-11-20T00:00',
      '2026-11-27T00:00',
    ],
    source: 'cronie',
    why: 'either: not "the first Friday" (use FRI#1 for that)',
  },
  {
    expr: '0 0 */10 * SUN',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-12-01T00:00',
    due: ['2026-11-01T00:00'],
    source: 'cronie',
    why: 'day-of-month starts with *: days 1, 11, 21 that are Sundays',
  },
  {
    expr: '0 0 13 * 5',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-12-01T00:00',
    due: ['2026-11-06T00:00', '2026-11-13T00:00', '2026-11-20T00:00', '2026-11-27T00:00'],
    source: 'cronie',
    why: 'either: the 13th or any Friday',
  },
  {
    expr: '0 0 * * MON',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-12-01T00:00',
    due: ['2026-11-02T00:00', '2026-11-09T00:00', '2026-11-16T00:00', '2026-11-23T00:00', '2026-11-30T00:00'],
    source: 'cronie',
    why: 'day-of-month is *: weekday alone',
  },
  {
    expr: '0 0 31 * *',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2027-01-15T00:00',
    due: ['2026-12-31T00:00'],
    source: 'cronie',
    why: 'months without a 31st are skipped',
  },
  // Wrap-around ranges
  {
    expr: '0 0 * * FRI-SUN',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-11-15T00:00',
    due: ['2026-11-01T00:00', '2026-11-06T00:00', '2026-11-07T00:00', '2026-11-08T00:00', '2026-11-13T00:00', '2026-11-14T00:00'],
    source: 'cronie',
    why: 'Friday to Sunday',
  },
  {
    expr: '0 0 * * SAT-MON',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-11-10T00:00',
    due: ['2026-11-01T00:00', '2026-11-02T00:00', '2026-11-07T00:00', '2026-11-08T00:00', '2026-11-09T00:00'],
    source: 'cronie',
    why: 'wraps over the week end',
  },
  {
    expr: '0 22-2 * * *',
    tz: U,
    from: '2026-11-01T20:00',
    to: '2026-11-02T04:00',
    due: ['2026-11-01T22:00', '2026-11-01T23:00', '2026-11-02T00:00', '2026-11-02T01:00', '2026-11-02T02:00'],
    source: 'cronie',
    why: 'hours wrap over midnight',
  },
  {
    expr: '0 22-4/3 * * *',
    tz: U,
    from: '2026-11-01T20:00',
    to: '2026-11-02T06:00',
    due: ['2026-11-01T22:00', '2026-11-02T01:00', '2026-11-02T04:00'],
    source: 'cronie',
    why: 'the step counts across the wrap: 22, 1, 4',
  },
  {
    expr: '0 0 28-3 * *',
    tz: U,
    from: '2026-02-20T00:00',
    to: '2026-03-10T00:00',
    due: ['2026-02-28T00:00', '2026-03-01T00:00', '2026-03-02T00:00', '2026-03-03T00:00'],
    source: 'cronie',
    why: 'days wrap over the month end (February has no 29-31 in 2026)',
  },
  {
    expr: '0 0 1 NOV-FEB *',
    tz: U,
    from: '2026-10-01T00:00',
    to: '2027-04-01T00:00',
    due: ['2026-11-01T00:00', '2026-12-01T00:00', '2027-01-01T00:00', '2027-02-01T00:00'],
    source: 'cronie',
    why: 'months wrap over the year end',
  },
  // Names, steps, nicknames
  {
    expr: '0 9 * * mon-fri',
    tz: U,
    from: '2026-11-20T00:00',
    to: '2026-11-25T00:00',
    due: ['2026-11-20T09:00', '2026-11-23T09:00', '2026-11-24T09:00'],
    source: 'cronie',
    why: 'names in any case',
  },
  {
    expr: '0 0 * * 7',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-11-15T00:00',
    due: ['2026-11-01T00:00', '2026-11-08T00:00'],
    source: 'cronie',
    why: '7 is Sunday, as 0',
  },
  {
    expr: '*/15 9-10 * * *',
    tz: U,
    from: '2026-11-02T08:00',
    to: '2026-11-02T12:00',
    due: [
      '2026-11-02T09:00',
      '2026-11-02T09:15',
      '2026-11-02T09:30',
      '2026-11-02T09:45',
      '2026-11-02T10:00',
      '2026-11-02T10:15',
      '2026-11-02T10:30',
      '2026-11-02T10:45',
    ],
    source: 'cronie',
    why: 'step over a range of hours',
  },
  {
    expr: '5-59/20 * * * *',
    tz: U,
    from: '2026-11-02T08:00',
    to: '2026-11-02T09:00',
    due: ['2026-11-02T08:05', '2026-11-02T08:25', '2026-11-02T08:45'],
    source: 'cronie',
    why: 'a step from 5 needs the range written out',
  },
  {
    expr: '@weekly',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-11-15T00:00',
    due: ['2026-11-01T00:00', '2026-11-08T00:00'],
    source: 'cronie',
    why: '@weekly = 0 0 * * 0',
  },
  // Extensions of SPEC §16
  {
    expr: '0 0 L * *',
    tz: U,
    from: '2026-01-15T00:00',
    to: '2026-05-15T00:00',
    due: ['2026-01-31T00:00', '2026-02-28T00:00', '2026-03-31T00:00', '2026-04-30T00:00'],
    source: 'ext',
    why: 'L: the last day of the month',
  },
  { expr: '0 0 L 2 *', tz: U, from: '2028-01-01T00:00', to: '2028-03-15T00:00', due: ['2028-02-29T00:00'], source: 'ext', why: 'L in a leap year' },
  {
    expr: '0 0 * * 5#3',
    tz: U,
    from: '2026-02-01T00:00',
    to: '2026-06-01T00:00',
    due: ['2026-02-20T00:00', '2026-03-20T00:00', '2026-04-17T00:00', '2026-05-15T00:00'],
    source: 'ext',
    why: 'the third Friday',
  },
  {
    expr: '0 0 * * MON#1',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2026-12-01T00:00',
    due: ['2026-11-02T00:00'],
    source: 'ext',
    why: 'the first Monday (a name before #)',
  },
  {
    expr: '0 0 * * 1#5',
    tz: U,
    from: '2026-11-01T00:00',
    to: '2027-01-01T00:00',
    due: ['2026-11-30T00:00'],
    source: 'ext',
    why: 'a fifth Monday: November has one, December none',
  },
  {
    expr: '0 0 * * 5L',
    tz: U,
    from: '2026-02-01T00:00',
    to: '2026-04-01T00:00',
    due: ['2026-02-27T00:00', '2026-03-27T00:00'],
    source: 'ext',
    why: 'the last Friday',
  },
]

export interface RejectRow {
  expr: string
  message: string
  source: 'cronie' | 'flowctl'
}

/** Forms that are refused, with flowctl's whole message (cronie refuses each too, unless marked). */
export const REJECT_TABLE: RejectRow[] = [
  {
    expr: '5/15 * * * *',
    message: 'cron "5/15 * * * *" has "5/15" in the minute field: a step needs a range; write 5-59/15 (every 15 from 5) or */15',
    source: 'cronie',
  },
  {
    expr: '0 0 1W * *',
    message: 'cron "0 0 1W * *" uses "W" (nearest weekday) in the day-of-month field, which is not supported; list the days instead',
    source: 'cronie',
  },
  {
    expr: '0 0 LW * *',
    message: 'cron "0 0 LW * *" uses "W" (nearest weekday) in the day-of-month field, which is not supported; list the days instead',
    source: 'cronie',
  },
  { expr: '0 0 ? * *', message: 'cron "0 0 ? * *" uses "?" in the day-of-month field, which is not supported; write * instead', source: 'cronie' },
  { expr: '0 0 * * ?', message: 'cron "0 0 * * ?" uses "?" in the day-of-week field, which is not supported; write * instead', source: 'cronie' },
  {
    expr: 'H * * * *',
    message: 'cron "H * * * *" uses "H" (hashed values) in the minute field, which is not supported; write the value explicitly',
    source: 'cronie',
  },
  { expr: '61 * * * *', message: 'cron "61 * * * *" has 61 in the minute field, which goes from 0 to 59', source: 'cronie' },
  { expr: '* 24 * * *', message: 'cron "* 24 * * *" has 24 in the hour field, which goes from 0 to 23', source: 'cronie' },
  { expr: '0 0 0 * *', message: 'cron "0 0 0 * *" has 0 in the day-of-month field, which goes from 1 to 31', source: 'cronie' },
  { expr: '0 0 * 13 *', message: 'cron "0 0 * 13 *" has 13 in the month field, which goes from 1 to 12', source: 'cronie' },
  { expr: '0 0 * * 8', message: 'cron "0 0 * * 8" has 8 in the day-of-week field, which goes from 0 to 7', source: 'cronie' },
  { expr: '0 0 * FOO *', message: 'cron "0 0 * FOO *" has "FOO" in the month field; use 1-12 or a name like JAN, FEB', source: 'cronie' },
  {
    expr: 'abc * * * *',
    message: 'cron "abc * * * *" has "abc" in the minute field; use numbers 0-59, *, ranges (a-b), lists (a,b) and steps (*/n, a-b/n)',
    source: 'cronie',
  },
  { expr: '*/0 * * * *', message: 'cron "*/0 * * * *" has "*/0" in the minute field: the step must be between 1 and 59', source: 'cronie' },
  {
    expr: '1,,2 * * * *',
    message: 'cron "1,,2 * * * *" has an empty list item in the minute field (two commas in a row, or a comma at an end)',
    source: 'cronie',
  },
  {
    expr: '0 0 1-5/2/3 * *',
    message: 'cron "0 0 1-5/2/3 * *" has "1-5/2/3" in the day-of-month field: a step is written once, like */15 or 0-30/5',
    source: 'cronie',
  },
  {
    expr: '0 0 * * 5#6',
    message: 'cron "0 0 * * 5#6" has "5#6" in the day-of-week field: the number after # is which week of the month, 1 to 5',
    source: 'flowctl',
  },
  {
    expr: '0 0 * * L',
    message:
      'cron "0 0 * * L" has "L" in the day-of-week field; L is allowed alone in the day-of-month field (last day) or after a weekday (5L: the last Friday)',
    source: 'flowctl',
  },
  { expr: '* * *', message: 'cron "* * *" has 3 fields; write 5 (minute hour day-of-month month day-of-week) or a nickname like @daily', source: 'cronie' },
  {
    expr: '0 * * * * *',
    message: 'cron "0 * * * * *" has 6 fields; write 5 (minute hour day-of-month month day-of-week) or a nickname like @daily',
    source: 'cronie',
  },
  { expr: '', message: 'cron "" has 0 fields; write 5 (minute hour day-of-month month day-of-week) or a nickname like @daily', source: 'cronie' },
  {
    expr: '@reboot',
    message:
      'cron "@reboot" is not a known nickname; use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or write 5 fields (minute hour day-of-month month day-of-week)',
    source: 'flowctl',
  },
]
