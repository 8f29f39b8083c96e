// SPEC §16 through the real binary on the embedded store: catch-up after the timer was stopped,
// dry runs that write nothing, backfill, and a tick in the future refused.
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl } from '../helpers.js'

afterAll(cleanupTempDirs)

const MINUTE = 60_000
/** A whole minute `k` minutes after a start safely in the past (the future is refused). */
const base = Math.floor(Date.now() / MINUTE) * MINUTE - 60 * MINUTE
const at = (k: number) => new Date(base + k * MINUTE).toISOString()

/** The example project plus an every-minute flow with the given catch-up setting. */
async function projectWith(catchUp: string): Promise<string> {
  const dir = await copyFixture('example')
  const flow = [
    'name: Every Minute',
    `schedule: { cron: "* * * * *", timezone: UTC, catchUp: ${catchUp} }`,
    'nodes:',
    '  - { id: start, type: start, name: Start, next: done }',
    '  - { id: done, type: end, name: Done, body: { ok: true } }',
    '',
  ]
  await writeFile(join(dir, 'flows', 'every-minute.yaml'), flow.join('\n'))
  return dir
}

interface HistoryRun {
  flow: string
  trigger: string
  scheduledFor: string | null
  startedAt: string
}

async function history(dir: string, flow = 'every-minute'): Promise<HistoryRun[]> {
  const result = await flowctl(['history', '--project', dir, '--flow', flow, '--limit', '1000', '--json'])
  expect(result.exitCode, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as HistoryRun[]
}

async function tick(dir: string, k: number, ...flags: string[]) {
  const result = await flowctl(['tick', '--project', dir, '--at', at(k), '--json', ...flags])
  expect(result.exitCode, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as { ran: number; dryRun: boolean; runs: { flow: string; scheduledFor: string; catchUp: boolean; status: string }[] }
}

describe('the timer stopped for 10 minutes, then a tick', () => {
  for (const [catchUp, expected] of [
    ['all', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
    ['latest', [10]],
    ['none', []],
  ] as const) {
    it(`catchUp: ${catchUp} runs ${expected.length === 0 ? 'no missed minute' : `minutes ${expected.join(', ')}`} once, plus minute 11`, async () => {
      const dir = await projectWith(catchUp)
      expect((await tick(dir, 0)).ran).toBe(1)
      const summary = await tick(dir, 11)
      expect(summary.runs.filter((r) => r.flow === 'every-minute').map((r) => [r.scheduledFor, r.catchUp])).toEqual([
        ...expected.map((k) => [at(k), true]),
        [at(11), false],
      ])
      // A second tick of minute 11 runs nothing more; a late tick of minute 5 runs it only if it never ran.
      expect((await tick(dir, 11)).ran).toBe(0)
      const ranFive = catchUp !== 'all'
      expect((await tick(dir, 5)).runs.filter((r) => r.flow === 'every-minute')).toEqual(
        ranFive ? [{ projectId: 'shop', flow: 'every-minute', scheduledFor: at(5), catchUp: false, runId: expect.any(String), status: 'success' }] : [],
      )
      const runs = await history(dir)
      const minutes = runs.map((r) => r.scheduledFor).sort()
      const want = [0, ...expected, 11, ...(ranFive ? [5] : [])].sort((a, b) => a - b).map(at)
      expect(minutes).toEqual(want)
      expect(runs.every((r) => r.trigger === 'cron')).toBe(true)
      // Runs are stamped when they really started, never at the (past) minute they were for.
      expect(runs.every((r) => Date.parse(r.startedAt) > base + 30 * MINUTE)).toBe(true)
    })
  }
})

describe('dry runs write nothing', () => {
  it('tick --dry-run and backfill --dry-run list what would run and leave the database file as it was', async () => {
    const dir = await projectWith('all')
    expect((await tick(dir, 0)).ran).toBe(1)
    const db = join(dir, '.flowctl', 'flowctl.db')
    // Each command checkpoints the WAL into the file when it closes: any write would show in the file or the WAL.
    const before = { history: await history(dir), bytes: await readFile(db), mtime: (await stat(db)).mtimeMs }

    const dry = await tick(dir, 3, '--dry-run')
    expect(dry.dryRun).toBe(true)
    expect(dry.ran).toBe(0)
    expect(dry.runs.filter((r) => r.flow === 'every-minute').map((r) => [r.scheduledFor, r.status])).toEqual([
      [at(1), 'would run'],
      [at(2), 'would run'],
      [at(3), 'would run'],
    ])

    const backfill = await flowctl(['backfill', 'every-minute', '--project', dir, '--from', at(0), '--to', at(4), '--dry-run', '--json'])
    expect(backfill.exitCode, backfill.stderr).toBe(0)
    const result = JSON.parse(backfill.stdout) as { dryRun: boolean; ran: number; alreadyRan: number; runs: { scheduledFor: string; status: string }[] }
    expect(result).toMatchObject({ dryRun: true, ran: 0, alreadyRan: 1 })
    expect(result.runs.map((r) => [r.scheduledFor, r.status])).toEqual([[at(0), 'already ran'], ...[1, 2, 3, 4].map((k) => [at(k), 'would run'])])

    const human = await flowctl(['backfill', 'every-minute', '--project', dir, '--from', at(0), '--to', at(2), '--dry-run'])
    expect(human.stdout).toContain('(dry run, nothing was run or written): 3 due, would run 2, already ran 1')
    expect(human.stdout).toContain(`${at(1).slice(0, 16)}Z  every-minute  would run`)

    expect(await history(dir)).toEqual(before.history)
    expect(Buffer.compare(await readFile(db), before.bytes)).toBe(0)
    expect((await stat(join(dir, '.flowctl', 'flowctl.db-wal')).catch(() => null))?.size ?? 0).toBe(0)
  })
})

describe('backfill', () => {
  it('runs each due minute of the range once, oldest first, and skips minutes that already ran', async () => {
    const dir = await projectWith('none')
    const first = await flowctl(['backfill', 'every-minute', '--project', dir, '--from', at(0), '--to', at(3), '--json'])
    expect(first.exitCode, first.stderr).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({ ran: 4, errors: 0, alreadyRan: 0 })
    const again = await flowctl(['backfill', 'every-minute', '--project', dir, '--from', at(2), '--to', at(5)])
    expect(again.exitCode, again.stderr).toBe(0)
    expect(again.stdout).toContain('4 due, ran 2, errors 0, already ran 2')
    expect((await history(dir)).map((r) => r.scheduledFor).sort()).toEqual([0, 1, 2, 3, 4, 5].map(at))
  })

  it('refuses with exit 2 and a plain message: the future, a reversed range, a bad time, an unscheduled, disabled or unknown flow', async () => {
    const dir = await projectWith('none')
    const paused = ['name: Paused', 'schedule: { cron: "* * * * *", enabled: false }', 'nodes:', '  - { id: start, type: start, name: Start }', '']
    await writeFile(join(dir, 'flows', 'paused.yaml'), paused.join('\n'))
    const future = new Date(Date.now() + 3_600_000).toISOString()
    const cases: [string[], string][] = [
      [['every-minute', '--from', at(0), '--to', future], 'is in the future'],
      [['every-minute', '--from', at(5), '--to', at(1)], 'is after --to'],
      [['every-minute', '--from', 'yesterday', '--to', at(1)], '--from expects an ISO 8601 time'],
      [['create-order', '--from', at(0), '--to', at(1)], 'flow "create-order" has no schedule'],
      [['nope', '--from', at(0), '--to', at(1)], 'flow "nope" not found'],
      // A disabled schedule was due at no minute: refused, dry run included, with how to go on.
      [['paused', '--from', at(0), '--to', at(1)], 'the schedule of flow "paused" is disabled (schedule.enabled: false in flows/paused.yaml)'],
      [['paused', '--from', at(0), '--to', at(1), '--dry-run'], 'set enabled: true to backfill it'],
    ]
    for (const [args, message] of cases) {
      const result = await flowctl(['backfill', ...args, '--project', dir])
      expect(result.exitCode, args.join(' ')).toBe(2)
      expect(result.stderr).toContain(message)
      expect(result.stderr).not.toMatch(/\n\s+at /) // no stack trace
    }
    expect(await history(dir)).toEqual([])
    expect(await history(dir, 'paused')).toEqual([])
  })
})

describe('a minute runs once, forever (SPEC §20)', () => {
  it('tick --at and backfill never run again a minute that ran weeks before the newest claim', async () => {
    const dir = await projectWith('none')
    const DAY = 24 * 60
    const old = -30 * DAY // 30 days before `base`
    expect((await tick(dir, old)).ran).toBe(1)
    // A tick at a much later minute (it used to prune every claim a week older than itself).
    expect((await tick(dir, 0)).ran).toBe(1)
    const again = await tick(dir, old)
    expect(again.runs.filter((r) => r.flow === 'every-minute')).toEqual([])
    expect(again.ran).toBe(0)
    const dry = await flowctl(['backfill', 'every-minute', '--project', dir, '--from', at(old - 1), '--to', at(old + 1), '--dry-run', '--json'])
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect((JSON.parse(dry.stdout) as { runs: { scheduledFor: string; status: string }[] }).runs.map((r) => [r.scheduledFor, r.status])).toEqual([
      [at(old - 1), 'would run'],
      [at(old), 'already ran'],
      [at(old + 1), 'would run'],
    ])
    const backfill = await flowctl(['backfill', 'every-minute', '--project', dir, '--from', at(old - 1), '--to', at(old + 1), '--json'])
    expect(backfill.exitCode, backfill.stderr).toBe(0)
    expect(JSON.parse(backfill.stdout)).toMatchObject({ ran: 2, alreadyRan: 1 })
    const minutes = (await history(dir)).map((r) => r.scheduledFor)
    expect(minutes.filter((m) => m === at(old))).toHaveLength(1)
    expect(minutes.sort()).toEqual([at(old - 1), at(old), at(old + 1), at(0)].sort())
  })
})

describe('tick --at in the future', () => {
  it('is refused (exit 2) unless --dry-run, and a dry run in the future shows what would run', async () => {
    const dir = await projectWith('none')
    const future = new Date(Math.floor(Date.now() / MINUTE) * MINUTE + 3 * 3_600_000).toISOString()
    const refused = await flowctl(['tick', '--project', dir, '--at', future])
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toContain('is in the future; running schedules for a minute that has not come would claim it')
    const dry = await flowctl(['tick', '--project', dir, '--at', future, '--dry-run'])
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`tick ${future} (dry run, nothing was run or written): would run 1`)
    expect(dry.stdout).toContain('every-minute  would run')
    expect(await history(dir)).toEqual([])
  })

  it('names the flows a tick ran in its human output', async () => {
    const dir = await projectWith('none')
    const result = await flowctl(['tick', '--project', dir, '--at', at(7)])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`ran 1, errors 0\\n  ${at(7).slice(0, 16)}Z  every-minute  success  \\(\\w+\\)\\n`))
  })
})
