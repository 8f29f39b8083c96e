// Several `flowctl serve` instances of one project on one PostgreSQL database (SPEC §3, §5.3):
// each schedule runs once per minute however the ticks are spread, and history holds every run.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, startServes } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

pgSkipNotice('two serve instances on PostgreSQL')

// Skipped without FLOWCTL_TEST_DATABASE_URL: a fresh machine has no PostgreSQL (notice printed above).
describe.skipIf(!PG_URL)('two serve instances on one PostgreSQL database', () => {
  let project: string
  let db: { url: string; drop: () => Promise<void> }
  const servers: ResultPromise[] = []
  const bases: string[] = []
  const env: Record<string, string> = { CRON_SECRET: 'pg-tick-secret' }

  beforeAll(async () => {
    db = await createTestDatabase()
    env.FLOWCTL_DATABASE_URL = db.url
    project = await copyFixture('example')
    await writeFile(
      join(project, 'flows', 'every-minute.yaml'),
      [
        'name: Every Minute',
        'schedule: { cron: "* * * * *" }',
        'nodes:',
        '  - { id: start, type: start, name: Start, next: done }',
        '  - { id: done, type: end, name: Done, body: { ok: true } }',
        '',
      ].join('\n'),
    )
    for (const started of await startServes(2, [project, '--quiet', '--no-watch'], { env })) {
      servers.push(started.child)
      bases.push(started.base)
    }
  })

  afterAll(async () => {
    for (const server of servers) server.kill('SIGTERM')
    await Promise.all(servers)
    await db?.drop()
    await cleanupTempDirs()
  })

  it('runs each schedule once per minute across concurrent ticks on both instances', async () => {
    const ticks = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        fetch(`${bases[i % 2]}/api/cron/tick`, { method: 'POST', headers: { authorization: 'Bearer pg-tick-secret' } }).then(async (r) => {
          expect(r.status).toBe(200)
          return (await r.json()) as { at: string; ran: number; errors: number }
        }),
      ),
    )
    // Ticks may straddle a minute boundary: count per minute.
    const ranByMinute = new Map<string, number>()
    for (const tick of ticks) ranByMinute.set(tick.at, (ranByMinute.get(tick.at) ?? 0) + tick.ran)
    for (const [minute, ran] of ranByMinute) expect({ minute, ran }).toEqual({ minute, ran: 1 })

    const history = await flowctl(['history', '--project', project, '--flow', 'every-minute', '--json'], { env })
    const runs = JSON.parse(history.stdout) as { method: string }[]
    expect(runs).toHaveLength(ranByMinute.size)
    expect(runs.every((r) => r.method === 'CRON')).toBe(true)
  })

  it('keeps the runs of both instances in one history', async () => {
    const ids: string[] = []
    for (const base of bases) {
      const response = await fetch(`${base}/api/run/shop/quote`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ sku: 'P', price: 1 }] }),
      })
      expect(response.status).toBe(200)
      ids.push(String(response.headers.get('x-run-id')))
    }
    const history = await flowctl(['history', '--project', project, '--flow', 'quote', '--json'], { env })
    const recorded = (JSON.parse(history.stdout) as { id: string }[]).map((r) => r.id)
    expect(recorded).toEqual(expect.arrayContaining(ids))
    const tick = await flowctl(['tick', '--project', project, '--json', '--at', '2026-11-21T02:00:00Z'], { env })
    expect(JSON.parse(tick.stdout)).toMatchObject({ ok: true, at: '2026-11-21T02:00:00.000Z' })
  })
})

// Skipped without FLOWCTL_TEST_DATABASE_URL (notice printed above).
describe.skipIf(!PG_URL)('catch-up ticks of two instances at once on one PostgreSQL database (SPEC §16)', () => {
  it('runs each missed minute once, however many ticks of both instances catch up together', async () => {
    const db = await createTestDatabase()
    try {
      const env = { FLOWCTL_DATABASE_URL: db.url }
      const project = await copyFixture('example')
      await writeFile(
        join(project, 'flows', 'every-minute.yaml'),
        [
          'name: Every Minute',
          'schedule: { cron: "* * * * *", timezone: UTC, catchUp: all }',
          'nodes:',
          '  - { id: start, type: start, name: Start, next: done }',
          '  - { id: done, type: end, name: Done, body: { ok: true } }',
          '',
        ].join('\n'),
      )
      const base = Math.floor(Date.now() / 60_000) * 60_000 - 30 * 60_000
      const at = (k: number) => new Date(base + k * 60_000).toISOString()
      expect((await flowctl(['tick', '--project', project, '--at', at(0)], { env })).exitCode).toBe(0)
      // Four tick processes (two "instances" each ticking twice) for minute 11, at once.
      const ticks = await Promise.all(Array.from({ length: 4 }, () => flowctl(['tick', '--project', project, '--at', at(11), '--json'], { env })))
      const summaries = ticks.map((t) => {
        expect(t.exitCode, t.stderr).toBe(0)
        return JSON.parse(t.stdout) as { ran: number; runs: { flow: string; scheduledFor: string }[] }
      })
      const claimed = summaries.flatMap((s) => s.runs.filter((r) => r.flow === 'every-minute').map((r) => r.scheduledFor)).sort()
      expect(claimed).toEqual(Array.from({ length: 11 }, (_, i) => at(i + 1)))
      const history = await flowctl(['history', '--project', project, '--flow', 'every-minute', '--limit', '100', '--json'], { env })
      const runs = JSON.parse(history.stdout) as { scheduledFor: string }[]
      expect(runs.map((r) => r.scheduledFor).sort()).toEqual(Array.from({ length: 12 }, (_, i) => at(i)))
    } finally {
      await db.drop()
    }
  })
})
