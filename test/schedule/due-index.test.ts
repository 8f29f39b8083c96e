import { describe, expect, it } from 'vitest'
import type { Project } from '../../src/model/project.js'
import { cronMatches } from '../../src/language/cron.js'
import { DueIndex, listSchedules } from '../../src/schedule/due-index.js'
import { makeProject, seeded, type FlowSpec } from './projects.js'

const MINUTE = 60_000
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe']
const EXPRESSIONS = [
  '* * * * *',
  '*/15 * * * *',
  '*/7 * * * *',
  '30 2 * * *',
  '0 2 * * *',
  '0 3 * * *',
  '59 1 * * *',
  '15 1-3 * * *',
  '0 * * * *',
  '5 9 * * 1-5',
  '@daily',
  '@hourly',
  '@weekly',
  '@monthly',
  '0 0 1,15 * *',
  '45 23 * * 0',
]

/** Projects holding every expression in every zone, a few disabled. */
function sampleProjects(zones = ZONES): Project[] {
  const flows: FlowSpec[] = []
  let n = 0
  for (const cron of EXPRESSIONS) {
    for (const timezone of zones) flows.push({ slug: `f${n++}`, schedule: { cron, timezone, enabled: n % 11 !== 0 } })
  }
  flows.push({ slug: 'no-schedule' })
  const half = Math.floor(flows.length / 2)
  return [makeProject('alpha', flows.slice(0, half)), makeProject('beta', flows.slice(half))]
}

/** What is due by definition: every enabled schedule whose cron matches the minute. */
function dueByDefinition(projects: Project[], at: Date): string[] {
  const out: string[] = []
  for (const project of projects) {
    for (const flow of project.flows.values()) {
      if (flow.schedule?.enabled && cronMatches(flow.schedule.cron, flow.schedule.timezone, at)) out.push(`${project.settings.projectId}/${flow.slug}`)
    }
  }
  return out.sort()
}

function keys(due: { project: Project; flow: { slug: string } }[]): string[] {
  return due.map((d) => `${d.project.settings.projectId}/${d.flow.slug}`).sort()
}

describe('DueIndex', () => {
  it('is exactly cronMatches, minute by minute across both Berlin and New York DST changes', () => {
    const projects = sampleProjects(['Europe/Berlin', 'America/New_York'])
    const index = DueIndex.fromProjects(projects)
    for (const [from, to] of [
      ['2026-03-28T23:50Z', '2026-03-29T03:10Z'],
      ['2026-10-24T23:30Z', '2026-10-25T02:30Z'],
      ['2026-11-01T04:30Z', '2026-11-01T07:30Z'],
    ] as const) {
      for (let t = Date.parse(from); t < Date.parse(to); t += MINUTE) {
        const at = new Date(t + 17_000) // seconds inside the minute do not matter
        expect(keys(index.due(at)), at.toISOString()).toEqual(dueByDefinition(projects, at))
      }
    }
  })

  it('is exactly cronMatches on random minutes, forwards, backwards and far jumps', () => {
    const projects = sampleProjects()
    const index = DueIndex.fromProjects(projects)
    const random = seeded(42)
    let t = Date.parse('2026-01-01T00:00:00Z')
    let dueSeen = 0
    for (let i = 0; i < 200; i++) {
      const step = random()
      if (step < 0.6) t += MINUTE * (1 + Math.floor(random() * 5)) // the usual: next minutes
      else if (step < 0.75) t -= MINUTE * Math.floor(random() * 600) // `tick --at` in the past
      else if (step < 0.9) t += MINUTE * Math.floor(random() * 1500) // up to a day ahead: walks buckets
      else t += MINUTE * Math.floor(random() * 200_000) // months ahead: recomputes
      // Snap some minutes onto likely-due times so the comparison is not only of empty sets.
      const at = new Date(random() < 0.3 ? Math.floor(t / 3_600_000) * 3_600_000 : t)
      const expected = dueByDefinition(projects, at)
      dueSeen += expected.length
      expect(keys(index.due(at)), at.toISOString()).toEqual(expected)
    }
    expect(dueSeen).toBeGreaterThan(60)
  })

  it('finds a yearly run years ahead: 29 February', () => {
    const index = DueIndex.fromProjects([makeProject('p', [{ slug: 'leap', schedule: { cron: '0 12 29 2 *', timezone: 'Europe/Berlin' } }])])
    expect(index.due(new Date('2027-01-01T00:00Z'))).toEqual([])
    expect(index.due(new Date('2027-02-28T11:00Z'))).toEqual([])
    expect(index.due(new Date('2027-03-01T11:00Z'))).toEqual([])
    expect(keys(index.due(new Date('2028-02-29T11:00Z')))).toEqual(['p/leap'])
    expect(index.due(new Date('2028-02-29T11:01Z'))).toEqual([])
  })

  it('never returns disabled schedules or flows without a schedule', () => {
    const project = makeProject('p', [
      { slug: 'on', schedule: { cron: '* * * * *' } },
      { slug: 'off', schedule: { cron: '* * * * *', enabled: false } },
      { slug: 'none' },
    ])
    const index = DueIndex.fromProjects([project])
    expect(index.size).toBe(1)
    expect(keys(index.due(new Date('2026-05-01T10:00Z')))).toEqual(['p/on'])
    expect(keys(index.due(new Date('2026-05-01T10:01Z')))).toEqual(['p/on'])
  })

  it('answers the same minute again at no cost, in a stable order, with the flow objects', () => {
    const project = makeProject('p', [
      { slug: 'b', schedule: { cron: '0 3 * * *', timezone: 'Europe/Berlin' } },
      { slug: 'a', schedule: { cron: '0 2 * * *', timezone: 'UTC' } },
    ])
    const index = DueIndex.fromProjects([project])
    const at = new Date('2026-11-21T02:00:00Z')
    const first = index.due(at)
    expect(first.map((d) => d.flow.slug)).toEqual(['a', 'b'])
    expect(first[0]?.flow).toBe(project.flows.get('a'))
    expect(first[0]?.project).toBe(project)
    expect(index.due(at).map((d) => d.flow.slug)).toEqual(['a', 'b'])
    expect(index.due(new Date('2026-11-21T02:01:00Z'))).toEqual([])
    expect(index.due(new Date('2026-11-22T02:00:00Z')).map((d) => d.flow.slug)).toEqual(['a', 'b'])
  })

  it("updateProject replaces only that project's schedules", () => {
    const alpha = makeProject('alpha', [{ slug: 'x', schedule: { cron: '*/5 * * * *' } }])
    const beta = makeProject('beta', [{ slug: 'y', schedule: { cron: '*/5 * * * *' } }])
    const index = DueIndex.fromProjects([alpha, beta])
    expect(keys(index.due(new Date('2026-05-01T10:00Z')))).toEqual(['alpha/x', 'beta/y'])

    const alpha2 = makeProject('alpha', [
      { slug: 'x', schedule: { cron: '*/5 * * * *', enabled: false } },
      { slug: 'z', schedule: { cron: '1 10 * * *' } },
    ])
    index.updateProject(alpha2)
    expect(keys(index.due(new Date('2026-05-01T10:01Z')))).toEqual(['alpha/z'])
    expect(index.due(new Date('2026-05-01T10:01Z'))[0]?.project).toBe(alpha2)
    expect(keys(index.due(new Date('2026-05-01T10:05Z')))).toEqual(['beta/y'])
    index.removeProject('beta')
    expect(keys(index.due(new Date('2026-05-01T10:10Z')))).toEqual([])
  })

  // The idle tick's flatness over 100 to 10,000 schedules is measured by bench/tick-scale.js, not timed here.
})

describe('listSchedules', () => {
  it('lists each schedule with its next run, by slug; disabled ones have none', () => {
    const project = makeProject('p', [
      { slug: 'nightly-cleanup', schedule: { cron: '0 3 * * *', timezone: 'Europe/Berlin' } },
      { slug: 'another', schedule: { cron: '*/15 * * * *', enabled: false } },
      { slug: 'plain' },
    ])
    expect(listSchedules(project, new Date('2026-11-20T12:34:56Z'))).toEqual([
      { flow: 'another', cron: '*/15 * * * *', timezone: 'UTC', enabled: false, nextRun: null, nextRunLocal: null, catchUp: 'none', catchUpMinutes: 60 },
      {
        flow: 'nightly-cleanup',
        cron: '0 3 * * *',
        timezone: 'Europe/Berlin',
        enabled: true,
        nextRun: '2026-11-21T02:00:00.000Z',
        nextRunLocal: '2026-11-21 03:00 GMT+01:00',
        catchUp: 'none',
        catchUpMinutes: 60,
      },
    ])
  })
})
