// SPEC §12's guards end to end, against the real `flowctl serve`: idempotency keys, a per-flow
// concurrency limit (and scheduled runs over it recorded as skipped) and the cluster-wide rate
// limit. On PostgreSQL with two instances on one database (skipped with a notice without
// FLOWCTL_TEST_DATABASE_URL), and on the embedded store with one instance.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadProject } from '../../src/project/load.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { cleanupTempDirs, flowctl, makeTempDir, startServes } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

const RATE_LIMIT = 10

const FLOWS: Record<string, string> = {
  // The wait keeps a run in flight long enough for the other calls to overlap it.
  pay: `name: Pay
nodes:
  - id: start
    type: start
    name: Start
    method: post
    idempotency: { header: Idempotency-Key, ttlSeconds: 600 }
    inputs: { body: { type: object, properties: { order: { type: integer } } } }
    next: pause
  - { id: pause, type: wait, name: Pause, ms: 400, next: done }
  - { id: done, type: end, name: Done, status: 201, headers: { x-order: "{{ start.order }}" }, body: { order: "{{ start.order }}", run: "{{ run.id }}" } }
`,
  busy: `name: Busy
nodes:
  - { id: start, type: start, name: Start, method: post, concurrency: { limit: 1 }, next: pause }
  - { id: pause, type: wait, name: Pause, ms: 1200, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  nightly: `name: Nightly
schedule: { cron: "* * * * *", timezone: UTC }
nodes:
  - { id: start, type: start, name: Start, method: post, concurrency: { limit: 1 }, next: pause }
  - { id: pause, type: wait, name: Pause, ms: 50, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  queued: `name: Queued
nodes:
  - { id: start, type: start, name: Start, method: post, concurrency: { limit: 1, onLimit: queue }, next: pause }
  - { id: pause, type: wait, name: Pause, ms: 150, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
}

/** Two projects: `guards` (no rate limit) and `limited` (RATE_LIMIT per minute, cluster scope). */
async function makeProjects(): Promise<{ guards: string; limited: string }> {
  const guards = await makeTempDir('flowctl-guards-')
  await mkdir(join(guards, 'flows'))
  await writeFile(join(guards, 'flowctl.yaml'), 'projectId: guards\nname: Guards\nlimits: { runsPerMinutePerIp: 0, runTimeoutMs: 10000 }\n')
  for (const [slug, text] of Object.entries(FLOWS)) await writeFile(join(guards, 'flows', `${slug}.yaml`), text)
  const limited = await makeTempDir('flowctl-limited-')
  await mkdir(join(limited, 'flows'))
  await writeFile(join(limited, 'flowctl.yaml'), `projectId: limited\nname: Limited\nlimits: { runsPerMinutePerIp: ${RATE_LIMIT}, rateLimitScope: cluster }\n`)
  await writeFile(
    join(limited, 'flows', 'ping.yaml'),
    'name: Ping\nnodes:\n  - { id: start, type: start, name: Start, method: post, next: done }\n  - { id: done, type: end, name: Done, body: { pong: true } }\n',
  )
  return { guards, limited }
}

interface Answer {
  status: number
  body: Record<string, unknown>
  headers: Headers
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: response.headers }
}

interface HistoryRun {
  id: string
  status: string
  startedAt: string
  durationMs: number
  error: string | null
}

async function history(project: string, flow: string, env: Record<string, string>, extra: string[] = []): Promise<HistoryRun[]> {
  const result = await flowctl(['history', '--project', project, '--flow', flow, '--limit', '200', '--json', ...extra], { env })
  expect(result.exitCode, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as HistoryRun[]
}

/** True when no two runs' [start, end] intervals overlap. */
function oneAtATime(runs: HistoryRun[]): boolean {
  const spans = runs.map((r) => [Date.parse(r.startedAt), Date.parse(r.startedAt) + r.durationMs] as const).sort((a, b) => a[0] - b[0])
  return spans.every((span, i) => i === 0 || span[0] >= spans[i - 1]![1])
}

/** Starts the rate-limit burst well inside one minute, so it cannot straddle two windows. */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute))
}

/** The guarantees, against `bases` (one or two instances of the same projects on one store). */
function describeGuarantees(setup: () => { bases: string[]; projects: { guards: string; limited: string }; env: Record<string, string> }): void {
  it('runs a request once however many copies of its idempotency key arrive at once, then replays its answer', async () => {
    const { bases, projects, env } = setup()
    const url = (i: number) => `${bases[i % bases.length]}/api/run/guards/pay`
    const key = { 'idempotency-key': 'order-7' }
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(url(i), { order: 7 }, key)))
    const ran = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null)
    expect(ran).toHaveLength(1)
    // The others overlapped the run (409); on a very slow machine one may come after it ended (a replay).
    for (const other of answers.filter((a) => a !== ran[0])) {
      if (other.status === 201) expect(other.headers.get('idempotent-replayed')).toBe('true')
      else expect(other.body).toEqual({ ok: false, errors: ['a request with this Idempotency-Key is still running'] })
    }
    expect(answers.filter((a) => a.status === 409).length).toBeGreaterThan(0)
    const runId = ran[0]!.headers.get('x-run-id')
    expect(ran[0]!.body).toEqual({ order: 7, run: runId })

    for (let i = 0; i < bases.length; i++) {
      const replay = await post(url(i), { order: 7 }, key)
      expect(replay.status).toBe(201)
      expect(replay.body).toEqual(ran[0]!.body)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.headers.get('x-run-id')).toBe(runId)
      expect(replay.headers.get('x-order')).toBe('7')
    }
    const mismatch = await post(url(1), { order: 8 }, key)
    expect(mismatch.status).toBe(422)
    expect(mismatch.body).toEqual({ ok: false, errors: ['Idempotency-Key was already used with a different request'] })
    expect((await history(projects.guards, 'pay', env)).map((r) => r.id)).toEqual([runId])
  })

  it('runs one call of a flow with concurrency limit 1 at a time; the overlapping calls get 429 flow busy', async () => {
    const { bases, projects, env } = setup()
    const before = (await history(projects.guards, 'busy', env)).length
    const url = (i: number) => `${bases[i % bases.length]}/api/run/guards/busy`
    // Two waves of overlapping calls, spread over the instances.
    for (let wave = 0; wave < 2; wave++) {
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => new Promise((r) => setTimeout(r, i * 40)).then(() => post(url(i), {}))))
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
      for (const busy of answers.filter((a) => a.status !== 200)) {
        expect(busy.status).toBe(429)
        expect(busy.body).toEqual({ ok: false, errors: ['flow busy'] })
        expect(busy.headers.get('retry-after')).toBe('1')
      }
    }
    const runs = await history(projects.guards, 'busy', env)
    expect(runs.length - before).toBe(2)
    expect(oneAtATime(runs)).toBe(true)
  })

  it('makes queued calls wait their turn: every call runs, one at a time', async () => {
    const { bases, projects, env } = setup()
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post(`${bases[i % bases.length]}/api/run/guards/queued`, {})))
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200])
    const runs = await history(projects.guards, 'queued', env)
    expect(runs).toHaveLength(6)
    expect(oneAtATime(runs)).toBe(true)
  })

  it('records a scheduled run over the concurrency limit as skipped, and runs it when a slot is free', async () => {
    const { projects, env } = setup()
    // Another process holds the flow's one slot (as a long HTTP run would), through the same store.
    const project = await loadProject(projects.guards, { env })
    const store = await openProjectStore(project, { env })
    try {
      const holder = await store.guards.acquireFlowSlot('guards', 'nightly', 1, 60_000)
      expect(holder).not.toBeNull()
      const tick = await flowctl(['tick', '--project', projects.guards, '--json', '--at', '2026-01-05T03:04:00Z'], { env })
      expect(tick.exitCode, tick.stderr).toBe(0)
      const summary = JSON.parse(tick.stdout) as { ran: number; runs: { flow: string; status: string; runId: string }[] }
      const skipped = summary.runs.find((r) => r.flow === 'nightly')
      expect(skipped?.status).toBe('skipped')
      const recorded = await history(projects.guards, 'nightly', env, ['--status', 'skipped'])
      expect(recorded.map((r) => r.id)).toEqual([skipped!.runId])
      expect(recorded[0]).toMatchObject({ status: 'skipped', error: "skipped: the flow's concurrency limit (1) was reached" })

      await store.guards.releaseFlowSlot('guards', 'nightly', holder!)
      const next = await flowctl(['tick', '--project', projects.guards, '--json', '--at', '2026-01-05T03:05:00Z'], { env })
      expect((JSON.parse(next.stdout) as { runs: { flow: string; status: string }[] }).runs.find((r) => r.flow === 'nightly')?.status).toBe('success')
    } finally {
      await store.close()
    }
  })

  it(`allows runsPerMinutePerIp (${RATE_LIMIT}) in total across the instances with rateLimitScope: cluster`, async () => {
    const { bases } = setup()
    await awayFromMinuteEdge()
    const answers = await Promise.all(Array.from({ length: 3 * RATE_LIMIT }, (_, i) => post(`${bases[i % bases.length]}/api/run/limited/ping`, {})))
    expect(answers.filter((a) => a.status === 200)).toHaveLength(RATE_LIMIT)
    const limited = answers.filter((a) => a.status === 429)
    expect(limited).toHaveLength(2 * RATE_LIMIT)
    expect(limited[0]!.body).toEqual({ ok: false, errors: ['rate limit exceeded'] })
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0)
    // Each instance alone would have allowed RATE_LIMIT: with two, that would be twice as many.
  })
}

async function serve(
  projects: { guards: string; limited: string },
  env: Record<string, string>,
  count: number,
): Promise<{ servers: ResultPromise[]; bases: string[] }> {
  const started = await startServes(count, [projects.guards, projects.limited, '--quiet', '--no-watch'], { env })
  return { servers: started.map((s) => s.child), bases: started.map((s) => s.base) }
}

pgSkipNotice('guards on two serve instances')

// Skipped without FLOWCTL_TEST_DATABASE_URL: a fresh machine has no PostgreSQL (notice printed above).
describe.skipIf(!PG_URL)('guards on two serve instances on one PostgreSQL database (SPEC §12)', () => {
  let db: { url: string; drop: () => Promise<void> }
  let projects: { guards: string; limited: string }
  let servers: ResultPromise[] = []
  let bases: string[] = []
  const env: Record<string, string> = {}

  beforeAll(async () => {
    db = await createTestDatabase()
    env.FLOWCTL_DATABASE_URL = db.url
    projects = await makeProjects()
    const started = await serve(projects, env, 2)
    servers = started.servers
    bases = started.bases
  })
  afterAll(async () => {
    for (const server of servers) server.kill('SIGTERM')
    await Promise.all(servers)
    await db?.drop()
    await cleanupTempDirs()
  })

  describeGuarantees(() => ({ bases, projects, env }))
})

describe('guards on one serve instance on the embedded store (SPEC §12)', () => {
  let projects: { guards: string; limited: string }
  let servers: ResultPromise[] = []
  let bases: string[] = []
  const env: Record<string, string> = {}

  beforeAll(async () => {
    projects = await makeProjects()
    const started = await serve(projects, env, 1)
    servers = started.servers
    bases = started.bases
  })
  afterAll(async () => {
    for (const server of servers) server.kill('SIGTERM')
    await Promise.all(servers)
    await cleanupTempDirs()
  })

  describeGuarantees(() => ({ bases, projects, env }))
})
