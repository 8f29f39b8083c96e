// SPEC §18 through the real loader and engine: `each` item cap, the run timeout stopping an `each`
// part-way (recorded as `timeout`, never success), and `limits.httpCallsPerRun` across retries and
// sub-flows (one count per top-level run).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import { RunBudget, YIELD_EVERY_MS } from '../../src/flow/run-budget.js'
import type { RunOutcome, TraceStep } from '../../src/model/run.js'
import type { Project } from '../../src/model/project.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'
import { cleanupTempDirs } from '../helpers.js'
import { projectFromText } from './project-from-text.js'

const BODY = 'inputs: { body: { type: object } }'
const HTTP_REASON = 'http calls exceed limits.httpCallsPerRun'

/** An upstream that counts requests: `/busy` answers 503, `/loop` redirects to itself. */
interface Upstream {
  url: string
  requests: number
  close(): Promise<void>
}

async function startUpstream(): Promise<Upstream> {
  const upstream = { url: '', requests: 0, close: async () => undefined }
  const server: Server = createServer((request, response) => {
    upstream.requests++
    if (request.url?.startsWith('/loop')) response.writeHead(302, { location: '/loop' }).end()
    else response.writeHead(503, { 'content-type': 'application/json' }).end('{"busy":true}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  upstream.close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return upstream
}

function flows(base: string): Record<string, string> {
  return {
    many: `
name: Many
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: item, concurrency: 4, retry: { attempts: 3, delayMs: 1 }, next: done }
  - { id: done, type: end, name: Done, body: { failed: "{{ all.failed }}", count: "{{= $count(all.results) }}" } }
`,
    // A sub-flow that calls another: the work an item does is CPU only (the tests' sleep answers at
    // once and counts the items that ran), so nothing but the engine's own yields lets the run
    // timeout's timer fire.
    item: `
name: Item
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: inner }
  - { id: inner, type: call, name: Inner, flow: leaf, input: { n: "{{ start.n }}" }, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ inner.body.n }}" } }
`,
    leaf: `
name: Leaf
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: nap }
  - { id: nap, type: wait, name: Nap, ms: 1, next: a }
  - { id: a, type: set, name: A, values: { n: "{{ start.n }}", t: "item {{ start.n }}" }, next: b }
  - { id: b, type: set, name: B, values: { n: "{{ a.n }}", t: "{{ a.t }} again" }, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ b.n }}" } }
`,
    // An each whose items each run an each (many): an item past eachItems fails that item only.
    nested: `
name: Nested
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{ start.groups }}", flow: many, next: done }
  - { id: done, type: end, name: Done, body: "{{ all }}" }
`,
    busy: `
name: Busy
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: call }
  - { id: call, type: http, name: Call, url: "${base}/busy", retry: { attempts: 10, delayMs: 0 }, next: done }
  - { id: done, type: end, name: Done, body: { status: "{{ call.status }}" } }
`,
    // each → call → http: the budget is one per top-level run, shared by every level.
    fanout: `
name: Fanout
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: relay, concurrency: 3, next: done }
  - { id: done, type: end, name: Done, body: "{{ all }}" }
`,
    relay: `
name: Relay
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: hop }
  - { id: hop, type: call, name: Hop, flow: busy, next: done }
  - { id: done, type: end, name: Done, body: "{{ hop.body }}" }
`,
    guarded: `
name: Guarded
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: call }
  - { id: call, type: http, name: Call, url: "${base}/busy", failOnStatus: true, retry: { attempts: 10, delayMs: 0 }, onError: fallback, next: done }
  - { id: done, type: end, name: Done }
  - { id: fallback, type: end, name: Fallback, status: 502, body: { error: "{{ call.error }}", attempts: "{{ call.attempts }}" } }
`,
    loop: `
name: Loop
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: call }
  - { id: call, type: http, name: Call, url: "${base}/loop", next: done }
  - { id: done, type: end, name: Done }
`,
  }
}

let store: Store
let upstream: Upstream

beforeAll(async () => {
  store = await openSqliteStore(':memory:')
  upstream = await startUpstream()
})
afterAll(async () => {
  await store.close()
  await upstream.close()
  await cleanupTempDirs()
})

async function projectWith(limits: string): Promise<Project> {
  return projectFromText(flows(upstream.url), { settings: `limits: { expressionMs: 2000, ${limits} }\n` })
}

/** Leaf items that ran (their wait node), across the file: read before and after a run. */
let leavesRan = 0
const countingSleep = () => {
  leavesRan++
  return Promise.resolve()
}

function run(project: Project, slug: string, body: unknown, signal?: AbortSignal): Promise<RunOutcome> {
  const flow = project.flows.get(slug)
  if (!flow) throw new Error(`no flow ${slug}`)
  return runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: { body }, trace: true, sleep: countingSleep, signal })
}

const stepsOf = (outcome: RunOutcome): TraceStep[] => (outcome.kind === 'invalid' ? [] : (outcome.trace?.steps ?? []))
const items = (count: number) => Array.from({ length: count }, (_, n) => ({ n }))

/** Upstream requests made by `work`. */
async function requestsDuring(work: () => Promise<unknown>): Promise<number> {
  const before = upstream.requests
  await work()
  return upstream.requests - before
}

describe('each: limits.eachItems', () => {
  it('more items than the limit fail the node before any item runs, and are not retried', async () => {
    const project = await projectWith('eachItems: 20')
    const outcome = await run(project, 'many', { items: items(21) })
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'all', error: 'each: 21 items exceed limits.eachItems (20)' })
    if (outcome.kind !== 'failed') return
    expect(outcome.record).toMatchObject({ status: 'error', error: 'each: 21 items exceed limits.eachItems (20)' })
    const attempts = stepsOf(outcome).filter((step) => step.nodeId === 'all')
    expect(attempts).toHaveLength(1)
    expect(attempts[0]?.calls ?? []).toEqual([])
  })

  it('exactly the limit runs every item', async () => {
    const project = await projectWith('eachItems: 20')
    expect(await run(project, 'many', { items: items(20) })).toMatchObject({ kind: 'response', body: { failed: 0, count: 20 } })
  })

  it("in a sub-flow it fails that item, not the caller (the list is the item's, not the run's)", async () => {
    const project = await projectWith('eachItems: 20')
    const outcome = await run(project, 'nested', { groups: [{ items: items(21) }, { items: items(2) }] })
    expect(outcome).toMatchObject({ kind: 'response', body: { failed: 1 } })
    const results = (outcome as { body: { results: { status: number; body: unknown }[] } }).body.results
    expect(results.map((result) => result.status)).toEqual([500, 200])
    expect(results[0]?.body).toEqual({ error: 'flow "many" failed at node "all": each: 21 items exceed limits.eachItems (20)' })
  })

  it('the default is 10,000 (the message names the configured limit)', async () => {
    const project = await projectWith('runTimeoutMs: 60000')
    expect(project.settings.limits.eachItems).toBe(10_000)
    expect(await run(project, 'many', { items: items(10_001) })).toMatchObject({ kind: 'failed', error: 'each: 10001 items exceed limits.eachItems (10000)' })
  })
})

describe('each: the run timeout stops it part-way', () => {
  it('a CPU-only each (call inside each) past runTimeoutMs is recorded as failed with reason timeout', async () => {
    // 10,000 items take about 0.4 s here; a 50 ms timeout stops the run long before the last item.
    const project = await projectWith('runTimeoutMs: 50')
    const before = leavesRan
    const outcome = await run(project, 'many', { items: items(10_000) })
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'all', error: 'timeout' })
    if (outcome.kind !== 'failed') return
    expect(outcome.record).toMatchObject({ status: 'error', error: 'timeout', failedNodeId: 'all', httpStatus: 500 })
    // Part-way: some items ran, not all, and none starts once the run has ended.
    const ran = leavesRan - before
    expect(ran).toBeGreaterThan(0)
    expect(ran).toBeLessThan(10_000)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(leavesRan - before).toBe(ran)
  })

  it('no item starts after the run is stopped (the caller aborts mid-each)', async () => {
    const project = await projectWith('runTimeoutMs: 60000')
    const controller = new AbortController()
    const before = leavesRan
    const outcome = run(project, 'many', { items: items(10_000) }, controller.signal)
    // Aborted on the first turn the engine gives the event loop, after at least one item ran.
    const abortOnceStarted = () => (leavesRan > before ? controller.abort() : setImmediate(abortOnceStarted))
    setImmediate(abortOnceStarted)
    expect(await outcome).toMatchObject({ kind: 'failed', nodeId: 'all', error: 'aborted' })
    const ran = leavesRan - before
    expect(ran).toBeGreaterThan(0)
    expect(ran).toBeLessThan(10_000)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(leavesRan - before).toBe(ran)
  })
})

describe('limits.httpCallsPerRun', () => {
  it('retries count: the node stops at the limit with the plain reason, and that failure is not retried', async () => {
    const project = await projectWith('httpCallsPerRun: 3')
    let outcome: RunOutcome | undefined
    const sent = await requestsDuring(async () => (outcome = await run(project, 'busy', {})))
    expect(sent).toBe(3)
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'call', error: HTTP_REASON })
    // Three answered attempts, then the fourth fails on the budget and no fifth is tried.
    expect(
      stepsOf(outcome!)
        .filter((step) => step.nodeId === 'call')
        .map((step) => step.attempt),
    ).toEqual([1, 2, 3, 4])
  })

  it('one count for the run and its sub-flows (each → call → http), and the each fails with the reason', async () => {
    const project = await projectWith('httpCallsPerRun: 25')
    let outcome: RunOutcome | undefined
    // 40 items × 10 attempts would be 400 requests.
    const sent = await requestsDuring(async () => (outcome = await run(project, 'fanout', { items: items(40) })))
    expect(sent).toBe(25)
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'all', error: HTTP_REASON })
    if (outcome?.kind === 'failed') expect(outcome.record.status).toBe('error')
  })

  it('each run has its own count', async () => {
    const project = await projectWith('httpCallsPerRun: 10')
    for (let i = 0; i < 2; i++) {
      // One run: 10 attempts of one item fit the budget exactly; the answer is the last 503.
      expect(await requestsDuring(async () => expect(await run(project, 'fanout', { items: items(1) })).toMatchObject({ kind: 'response' }))).toBe(10)
    }
  })

  it('onError still catches it, with the plain reason', async () => {
    const project = await projectWith('httpCallsPerRun: 2')
    expect(await run(project, 'guarded', {})).toMatchObject({ kind: 'response', status: 502, body: { error: HTTP_REASON, attempts: 3 } })
  })

  it('redirect hops are requests too', async () => {
    const project = await projectWith('httpCallsPerRun: 3')
    let outcome: RunOutcome | undefined
    expect(await requestsDuring(async () => (outcome = await run(project, 'loop', {})))).toBe(3)
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'call', error: HTTP_REASON })
  })
})

describe('RunBudget', () => {
  it('asks for no yield before YIELD_EVERY_MS, then one shared by every caller until it is taken', async () => {
    // Only the clock is faked (setImmediate stays real): a loaded machine can pause this test for
    // more than YIELD_EVERY_MS between two lines, which made a real-clock version fail in CI.
    vi.useFakeTimers({ toFake: ['performance'] })
    try {
      const budget = new RunBudget(1)
      expect(budget.pace()).toBeNull()
      vi.advanceTimersByTime(YIELD_EVERY_MS - 1)
      expect(budget.pace()).toBeNull()
      vi.advanceTimersByTime(1)
      const first = budget.pace()
      expect(first).not.toBeNull()
      expect(budget.pace()).toBe(first)
      await first
      expect(budget.pace()).toBeNull()
      vi.advanceTimersByTime(YIELD_EVERY_MS)
      const second = budget.pace()
      expect(second).not.toBeNull()
      expect(second).not.toBe(first)
      await second
    } finally {
      vi.useRealTimers()
    }
  })

  it('counts http calls up to the limit, then throws the plain reason', () => {
    const budget = new RunBudget(2)
    budget.takeHttpCall()
    budget.takeHttpCall()
    expect(() => budget.takeHttpCall()).toThrow(HTTP_REASON)
    expect(budget.httpCalls).toBe(2)
  })
})
