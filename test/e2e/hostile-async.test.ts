// SPEC §18, "Async fairness", through a real `flowctl serve`: a backlog of one async flow cannot hold
// back another flow's async runs (workers claim round-robin across flows), and an async Start is
// rate-limited like a synchronous one. The red team's case: eight anonymous requests to one slow
// async flow held back every other flow's async runs until the backlog drained.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { awayFromMinuteEnd, cleanupTempDirs, eventually, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { MAX_PROBE_MS, MAX_RSS_GROWTH, underAttack } from './hostile-harness.js'

const SLOW_MS = 1500
const BACKLOG = 8
const RATE_LIMIT = 3

const asyncFlow = (name: string, pause: number | null, respond = 'async') => `name: ${name}
nodes:
  - id: start
    type: start
    name: Start
    method: post
    respond: ${respond}
    next: ${pause === null ? 'done' : 'pause'}
${pause === null ? '' : `  - { id: pause, type: wait, name: Pause, ms: ${pause}, next: done }\n`}  - { id: done, type: end, name: Done, status: 200, body: { ok: true } }
`

async function writeProject(projectId: string, limits: string, flows: Record<string, string>): Promise<string> {
  const dir = await makeTempDir(`flowctl-${projectId}-`)
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), `projectId: ${projectId}\nname: ${projectId}\nlimits: { ${limits} }\n`)
  for (const [file, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', file), text)
  return dir
}

interface HistoryRecord {
  id: string
  flow: string
  status: string
  startedAt: string
  durationMs: number
}

let serve: StartedServe

beforeAll(async () => {
  const fair = await writeProject('fair', 'runsPerMinutePerIp: 0, asyncConcurrency: 4', {
    'slow.yaml': asyncFlow('Slow', SLOW_MS),
    'quick.yaml': asyncFlow('Quick', null),
  })
  const limited = await writeProject('limited', `runsPerMinutePerIp: ${RATE_LIMIT}`, {
    'later.yaml': asyncFlow('Later', null),
    'now.yaml': asyncFlow('Now', null, 'sync'),
  })
  serve = await startServe([fair, limited, '--quiet', '--no-watch'])
}, 60_000)

afterAll(async () => {
  serve?.child.kill('SIGTERM')
  await serve?.child.catch(() => undefined)
  await cleanupTempDirs()
})

const post = (path: string) => fetch(`${serve.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })

async function queue(slug: string): Promise<string> {
  const response = await post(`/api/run/fair/${slug}`)
  const body = (await response.json()) as { runId: string; status: string }
  expect(response.status).toBe(202)
  expect(body.status).toBe('queued')
  return body.runId
}

async function history(projectId: string): Promise<HistoryRecord[]> {
  const response = await fetch(`${serve.base}/api/runs/${projectId}?limit=100`)
  const body = (await response.json()) as { runs?: HistoryRecord[] } | HistoryRecord[]
  return Array.isArray(body) ? body : (body.runs ?? [])
}

const finishedAt = (run: HistoryRecord) => Date.parse(run.startedAt) + run.durationMs

describe('async fairness (SPEC §18)', () => {
  it("runs another flow's async run long before one flow's backlog of slow runs drains", async () => {
    // One run first, so the measure below sees the async path warm, not its first-call costs.
    const warmUp = await queue('quick')
    await eventually(async () => (await history('fair')).some((run) => run.id === warmUp))
    const attack = async () => {
      // The backlog: all eight acknowledged (committed to the queue) before the other flow's request.
      const slow = await Promise.all(Array.from({ length: BACKLOG }, () => queue('slow')))
      const quick = await queue('quick')
      await eventually(async () => (await history('fair')).length === BACKLOG + 2, 4 * BACKLOG * SLOW_MS, 100)
      return { slow, quick }
    }
    const { result, worstProbeMs, idleRss, peakRss } = await underAttack(serve, attack)
    const runs = await history('fair')
    const quick = runs.find((run) => run.id === result.quick)
    const slow = runs.filter((run) => run.flow === 'slow')
    expect(quick).toMatchObject({ flow: 'quick', status: 'success' })
    expect(new Set(slow.map((run) => run.id))).toEqual(new Set(result.slow))
    expect(slow.every((run) => run.status === 'success')).toBe(true)
    // Oldest first, four workers: the quick run, queued after all eight, would wait for the first
    // four to finish and then for one of the next four. Round-robin gives it the first free worker:
    // it finishes before the backlog's 5th run does.
    const slowFinishes = slow.map(finishedAt).sort((a, b) => a - b)
    expect(finishedAt(quick!)).toBeLessThan(slowFinishes[4]!)
    expect(worstProbeMs).toBeLessThan(MAX_PROBE_MS)
    expect(peakRss - idleRss).toBeLessThan(MAX_RSS_GROWTH)
  }, 60_000)

  it('answers 429 to an async Start past runsPerMinutePerIp, sharing the budget with sync Starts, and queues nothing for it', async () => {
    await awayFromMinuteEnd()
    const sync = await post('/api/run/limited/now')
    expect(sync.status).toBe(200)
    for (let i = 1; i < RATE_LIMIT; i++) expect((await post('/api/run/limited/later')).status).toBe(202)
    const refused = await post('/api/run/limited/later')
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await refused.json()).toEqual({ ok: false, errors: ['rate limit exceeded'] })
    expect(refused.headers.get('location')).toBeNull()
    // The two accepted async runs ran; the refused one was never queued.
    await eventually(async () => (await history('limited')).filter((run) => run.flow === 'later').length === RATE_LIMIT - 1)
    expect((await history('limited')).filter((run) => run.flow === 'later')).toHaveLength(RATE_LIMIT - 1)
    expect((await post('/api/run/limited/now')).status).toBe(429)
  })
})
