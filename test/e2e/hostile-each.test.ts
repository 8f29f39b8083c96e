// SPEC §18 against the real `flowctl serve`: an `each` over 200,000 items fails on limits.eachItems;
// a CPU-only `each` over 10,000 items (a `call` inside each item) is stopped part-way by the run
// timeout and recorded as `timeout`, never success; a retrying `each` of http calls stops at
// limits.httpCallsPerRun and the upstream sees no more; the same each over 10,000 items, given the
// default 30 s, runs to its end. Meanwhile another client keeps being served within SPEC §18's bounds
// (test/e2e/hostile-harness.ts).
import { mkdir, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { latestRun, MAX_PROBE_MS, MAX_RSS_GROWTH, underAttack } from './hostile-harness.js'

const HTTP_CALLS_PER_RUN = 50
const BODY = 'inputs: { body: { type: object } }'
const FORTY = Array.from({ length: 40 }, (_, n) => `{ n: ${n} }`).join(', ')

function flows(upstream: string): Record<string, string> {
  return {
    // Runs `item` once per element of the body's list.
    fan: `name: Fan
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: item, next: done }
  - { id: done, type: end, name: Done, body: { failed: "{{ all.failed }}" } }
`,
    // Each item calls another flow, then runs it once per element of a list of ten: CPU work only
    // (about 5 s for 10,000 items here), so only the engine's yields let the timeout's timer fire.
    item: `name: Item
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: inner }
  - { id: inner, type: call, name: Inner, flow: leaf, input: { n: "{{ start.n }}" }, next: ten }
  - { id: ten, type: set, name: Ten, values: { list: [{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }, { n: 6 }, { n: 7 }, { n: 8 }, { n: 9 }] }, next: parts }
  - { id: parts, type: each, name: Parts, items: "{{ ten.list }}", flow: leaf, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ inner.body.n }}", parts: "{{ parts.failed }}" } }
`,
    // As fan and item, with forty leaves per item: about 4 s for 10,000 items here, so the 1 s
    // timeout stops it part-way (fan's 710,000 steps take under a second once their steps past the
    // stored trace's cut are not kept).
    slowfan: `name: Slowfan
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: slowitem, next: done }
  - { id: done, type: end, name: Done, body: { failed: "{{ all.failed }}" } }
`,
    slowitem: `name: Slowitem
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: inner }
  - { id: inner, type: call, name: Inner, flow: leaf, input: { n: "{{ start.n }}" }, next: many }
  - { id: many, type: set, name: Many, values: { list: [${FORTY}] }, next: parts }
  - { id: parts, type: each, name: Parts, items: "{{ many.list }}", flow: leaf, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ inner.body.n }}", parts: "{{ parts.failed }}" } }
`,
    leaf: `name: Leaf
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: a }
  - { id: a, type: set, name: A, values: { n: "{{ start.n }}", t: "item {{ start.n }}" }, next: b }
  - { id: b, type: set, name: B, values: { n: "{{ a.n }}", t: "{{ a.t }} b" }, next: c }
  - { id: c, type: set, name: C, values: { n: "{{ b.n }}", t: "{{ b.t }} c" }, next: d }
  - { id: d, type: set, name: D, values: { n: "{{ c.n }}", t: "{{ c.t }} d" }, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ d.n }}", t: "{{ d.t }}" } }
`,
    // A retrying each of http calls: every item tries a busy upstream 10 times.
    hammer: `name: Hammer
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: ask, concurrency: 4, next: done }
  - { id: done, type: end, name: Done, body: { failed: "{{ all.failed }}" } }
`,
    ask: `name: Ask
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: call }
  - { id: call, type: http, name: Call, url: "${upstream}/busy", failOnStatus: true, retry: { attempts: 10, delayMs: 0 }, next: done }
  - { id: done, type: end, name: Done, body: { status: "{{ call.status }}" } }
`,
  }
}

let dir: string
let serve: StartedServe
let upstream: Server
let upstreamRequests = 0

beforeAll(async () => {
  upstream = createServer((_request, response) => {
    upstreamRequests++
    response.writeHead(503, { 'content-type': 'application/json' }).end('{"busy":true}')
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  dir = await makeTempDir('flowctl-hostile-each-')
  await mkdir(join(dir, 'flows'))
  // A body limit large enough for 200,000 items, so the each node (not the 413) refuses them.
  await writeFile(
    join(dir, 'flowctl.yaml'),
    `projectId: hostile\nname: Hostile\nlimits: { runsPerMinutePerIp: 0, runTimeoutMs: 1000, bodyLimitBytes: 16777216, httpCallsPerRun: ${HTTP_CALLS_PER_RUN} }\n`,
  )
  for (const [slug, text] of Object.entries(flows(upstreamUrl))) await writeFile(join(dir, 'flows', `${slug}.yaml`), text)
  serve = await startServe(['--quiet'], { cwd: dir })
}, 60_000)

afterAll(async () => {
  serve?.child.kill('SIGTERM')
  await serve?.child.catch(() => undefined)
  upstream?.closeAllConnections()
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()))
  await cleanupTempDirs()
})

function post(slug: string, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return fetch(`${serve.base}/api/run/hostile/${slug}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (response) => ({
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
  }))
}

const itemsBody = (count: number) => JSON.stringify({ items: Array.from({ length: count }, (_, n) => ({ n })) })

describe('each under attack (SPEC §18)', () => {
  it('an each over 200,000 items fails on limits.eachItems, and everyone else is still served', async () => {
    // What the items hold does not matter (none runs): 200,000 small numbers are a 1.2 MB body.
    const body = JSON.stringify({ items: Array.from({ length: 200_000 }, (_, n) => n) })
    const measured = await underAttack(serve, () => post('fan', body))
    expect(measured.result.status).toBe(500)
    expect(measured.result.body).toMatchObject({ ok: false, errors: ['node all failed'], nodeId: 'all' })
    const record = await latestRun(serve, 'hostile', 'fan')
    expect(record).toMatchObject({ status: 'error', failedNodeId: 'all', error: 'each: 200000 items exceed limits.eachItems (10000)' })
    expect(measured.failedProbes).toBe(0)
    expect(measured.worstProbeMs).toBeLessThan(MAX_PROBE_MS)
    expect(measured.peakRss - measured.idleRss).toBeLessThan(MAX_RSS_GROWTH)
  }, 60_000)

  it('an each over 10,000 items with a sub-flow is stopped by runTimeoutMs: 1000, recorded as error "timeout"', { timeout: 60_000 }, async () => {
    const measured = await underAttack(serve, () => post('slowfan', itemsBody(10_000)))
    expect(measured.result.status).toBe(500)
    expect(measured.result.body).toMatchObject({ ok: false, errors: ['node all failed'], nodeId: 'all' })
    const record = await latestRun(serve, 'hostile', 'slowfan')
    expect(record).toMatchObject({ status: 'error', failedNodeId: 'all', error: 'timeout' })
    // The other client was answered while the each ran, never waiting long.
    expect(measured.probes).toBeGreaterThan(1)
    expect(measured.failedProbes).toBe(0)
    expect(measured.worstProbeMs).toBeLessThan(MAX_PROBE_MS)
    expect(measured.peakRss - measured.idleRss).toBeLessThan(MAX_RSS_GROWTH)
  })

  it('a retrying each of http calls stops at limits.httpCallsPerRun; the upstream sees no more', async () => {
    const before = upstreamRequests
    // 2,000 items × 10 attempts would be 20,000 upstream requests from a 6 KB body.
    const body = JSON.stringify({ items: Array.from({ length: 2_000 }, () => ({})) })
    const measured = await underAttack(serve, () => post('hammer', body))
    expect(upstreamRequests - before).toBe(HTTP_CALLS_PER_RUN)
    expect(measured.result.status).toBe(500)
    expect(measured.result.body).toMatchObject({ ok: false, errors: ['node all failed'], nodeId: 'all' })
    const record = await latestRun(serve, 'hostile', 'hammer')
    expect(record).toMatchObject({ status: 'error', failedNodeId: 'all', error: 'http calls exceed limits.httpCallsPerRun' })
    expect(measured.failedProbes).toBe(0)
    expect(measured.worstProbeMs).toBeLessThan(MAX_PROBE_MS)
    expect(measured.peakRss - measured.idleRss).toBeLessThan(MAX_RSS_GROWTH)
  })
})

describe('an each that runs to its end (SPEC §18)', () => {
  let project: string
  let whole: StartedServe

  beforeAll(async () => {
    project = await makeTempDir('flowctl-hostile-each-whole-')
    await mkdir(join(project, 'flows'))
    // The default runTimeoutMs (30 s) and history keep: all, so the run ends on its own and stores its trace.
    await writeFile(join(project, 'flowctl.yaml'), 'projectId: hostile\nname: Hostile\nlimits: { runsPerMinutePerIp: 0 }\n')
    for (const slug of ['fan', 'item', 'leaf']) await writeFile(join(project, 'flows', `${slug}.yaml`), flows('http://127.0.0.1:1')[slug]!)
    whole = await startServe(['--quiet'], { cwd: project })
  }, 60_000)

  afterAll(async () => {
    whole?.child.kill('SIGTERM')
    await whole?.child.catch(() => undefined)
  })

  it('an each over 10,000 items with a sub-flow that completes is recorded success, its stored trace cut small', { timeout: 120_000 }, async () => {
    const measured = await underAttack(whole, () =>
      fetch(`${whole.base}/api/run/hostile/fan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: itemsBody(10_000) }).then(
        async (response) => ({ status: response.status, body: (await response.json()) as unknown }),
      ),
    )
    expect(measured.result).toEqual({ status: 200, body: { failed: 0 } })
    const record = await latestRun(whole, 'hostile', 'fan')
    expect(record).toMatchObject({ status: 'success', httpStatus: 200, error: null })
    const stored = (await (await fetch(`${whole.base}/api/runs/hostile/${String(record!.id)}`)).json()) as { trace: { cut: boolean; steps: unknown[] } }
    // ~710,000 steps ran; the stored trace holds the outputs up to limits.traceBytes (65,536) and the
    // three top-level steps, the calls past the cut left out.
    expect(stored.trace.cut).toBe(true)
    expect(stored.trace.steps).toHaveLength(3)
    expect(Buffer.byteLength(JSON.stringify(stored.trace))).toBeLessThan(2 * 65_536)
    expect(measured.probes).toBeGreaterThan(1)
    expect(measured.failedProbes).toBe(0)
    expect(measured.worstProbeMs).toBeLessThan(MAX_PROBE_MS)
    // The steps of calls past the cut are not kept while the run goes on (they took ~200 MB).
    expect(measured.peakRss - measured.idleRss).toBeLessThan(128 * 1024 * 1024)
  })
})
