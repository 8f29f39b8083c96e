// SPEC §13 through the real loader and engine: retry, onError, call, each, wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import { retryDelayMs, retryOf } from '../../src/nodes/retry.js'
import type { RunOutcome, TraceStep } from '../../src/model/run.js'
import type { Project } from '../../src/model/project.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'
import { cleanupTempDirs } from '../helpers.js'
import { startLocalServer, type LocalServer } from '../nodes/local-server.js'
import { projectFromText } from './project-from-text.js'

let store: Store
let server: LocalServer
let project: Project

const BODY = 'inputs: { body: { type: object } }'

function flows(base: string): Record<string, string> {
  return {
    fetch: `
name: Fetch
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: call }
  - id: call
    type: http
    name: Call
    url: "${base}/flaky?key={{ start.key }}&fail={{ start.fail }}"
    failOnStatus: true
    retry: { attempts: 3, delayMs: 10, factor: 2 }
    onError: fallback
    next: done
  - { id: done, type: end, name: Done, body: { calls: "{{ call.body.calls }}" } }
  - { id: fallback, type: end, name: Fallback, status: 502, body: { error: "{{ call.error }}", attempts: "{{ call.attempts }}" } }
`,
    soft: `
name: Soft
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: call }
  - id: call
    type: http
    name: Call
    url: "${base}/flaky?key={{ start.key }}&fail={{ start.fail }}"
    retry: { attempts: 2, delayMs: 5 }
    next: done
  - { id: done, type: end, name: Done, body: { status: "{{ call.status }}" } }
`,
    hard: `
name: Hard
nodes:
  - { id: start, type: start, name: Start, next: boom }
  - { id: boom, type: set, name: Boom, values: { v: "{{= $number('x') }}" }, retry: { attempts: 2, delayMs: 1 }, next: done }
  - { id: done, type: end, name: Done }
`,
    price: `
name: Price
nodes:
  - id: start
    type: start
    name: Start
    inputs: { body: { type: object, required: [qty], properties: { qty: { type: integer, minimum: 1 }, price: { type: number, default: 2 } } } }
    next: check
  - id: check
    type: if
    name: Check
    condition: { left: "{{ start.qty }}", op: gt, right: 100 }
    next: { true: refuse, false: done }
  - { id: refuse, type: end, name: Refuse, status: 422, body: { error: too many } }
  - { id: done, type: end, name: Done, body: { total: "{{= start.qty * start.price }}" } }
`,
    order: `
name: Order
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: priced }
  - { id: priced, type: call, name: Priced, flow: price, input: { qty: "{{ start.qty }}" }, next: done }
  - { id: done, type: end, name: Done, body: "{{ priced }}" }
`,
    bulk: `
name: Bulk
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{= [start.lines.{'qty': $}] }}", flow: price, concurrency: 3, next: done }
  - { id: done, type: end, name: Done, body: "{{ all }}" }
`,
    pause: `
name: Pause
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: nap }
  - { id: nap, type: wait, name: Nap, ms: "{{ start.ms }}", next: done }
  - { id: done, type: end, name: Done, body: { waited: "{{ nap.waitedMs }}" } }
`,
  }
}

beforeAll(async () => {
  store = await openSqliteStore(':memory:')
  server = await startLocalServer()
  // A generous expression bound: this machine may be busy, and these tests are not about time.
  project = await projectFromText(flows(server.url), { settings: 'limits: { expressionMs: 2000 }\n' })
})
afterAll(async () => {
  await store.close()
  await server.close()
  await cleanupTempDirs()
})

function run(slug: string, body: unknown, target: Project = project): Promise<RunOutcome> {
  const flow = target.flows.get(slug)
  if (!flow) throw new Error(`no flow ${slug}`)
  return runFlow({ project: target, flow, store, trigger: 'cli', method: 'CLI', input: { body }, trace: true })
}

const stepsOf = (outcome: RunOutcome): TraceStep[] => (outcome.kind === 'invalid' ? [] : (outcome.trace?.steps ?? []))

describe('retry settings', () => {
  const cases: [string, Record<string, unknown>, number[]][] = [
    ['defaults: 200 ms doubling', { retry: { attempts: 4 } }, [200, 400, 800]],
    ['factor 1 keeps the delay', { retry: { attempts: 3, delayMs: 50, factor: 1 } }, [50, 50]],
    ['capped by maxDelayMs', { retry: { attempts: 5, delayMs: 1000, factor: 3, maxDelayMs: 5000 } }, [1000, 3000, 5000, 5000]],
  ]
  for (const [name, settings, delays] of cases) {
    it(name, () => {
      const retry = retryOf(settings)
      expect(Array.from({ length: retry.attempts - 1 }, (_, i) => retryDelayMs(retry, i + 2))).toEqual(delays)
    })
  }
})

describe('retry and onError', () => {
  it('a node that fails twice then succeeds: every attempt in the trace', async () => {
    const outcome = await run('fetch', { key: 'twice', fail: 2 })
    expect(outcome).toMatchObject({ kind: 'response', status: 200, body: { calls: 3 } })
    const attempts = stepsOf(outcome).filter((step) => step.nodeId === 'call')
    expect(attempts.map((step) => [step.attempt, step.port])).toEqual([
      [1, null],
      [2, null],
      [3, 'out'],
    ])
    expect(attempts[0]?.output).toEqual({
      error: 'HTTP GET request answered 503 Service Unavailable',
      http: { method: 'GET', url: expect.stringMatching(/\/flaky\?key=twice&fail=2$/), status: 503, body: '{"calls":1}' },
    })
  })

  it('still failing after its retries: the run goes on at onError with { error, attempts }', async () => {
    const outcome = await run('fetch', { key: 'always', fail: 10 })
    expect(outcome).toMatchObject({ kind: 'response', status: 502, body: { error: 'HTTP GET request answered 503 Service Unavailable', attempts: 3 } })
    if (outcome.kind !== 'response') return
    expect(outcome.record.ports).toEqual([{ nodeId: 'call', port: 'error' }])
    expect(outcome.record.status).toBe('success')
    expect(stepsOf(outcome).map((step) => `${step.nodeId}:${step.port}`)).toEqual(['start:out', 'call:null', 'call:null', 'call:error', 'fallback:null'])
  })

  it('without failOnStatus a 5xx is retried and the last answer is the output', async () => {
    const recovered = await run('soft', { key: 'soft-once', fail: 1 })
    expect(recovered).toMatchObject({ kind: 'response', body: { status: 200 } })
    const exhausted = await run('soft', { key: 'soft-always', fail: 10 })
    expect(exhausted).toMatchObject({ kind: 'response', body: { status: 503 } })
    expect(stepsOf(exhausted).filter((step) => step.nodeId === 'call')).toHaveLength(2)
  })

  it('without onError the run fails after the last attempt', async () => {
    const outcome = await run('hard', {})
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'boom', error: expect.stringContaining('Unable to cast value to a number') })
    expect(
      stepsOf(outcome)
        .filter((step) => step.nodeId === 'boom')
        .map((step) => step.attempt),
    ).toEqual([1, 2])
  })

  it('the run timeout bounds retries', async () => {
    const slow = { ...project, settings: { ...project.settings, limits: { ...project.settings.limits, runTimeoutMs: 150 } } }
    const flow = project.flows.get('fetch')!
    const tight = {
      ...flow,
      nodes: flow.nodes.map((node) => (node.id === 'call' ? { ...node, settings: { ...node.settings, retry: { attempts: 10, delayMs: 1000 } } } : node)),
    }
    tight.nodesById = new Map(tight.nodes.map((node) => [node.id, node]))
    const began = Date.now()
    const outcome = await runFlow({ project: slow, flow: tight, store, trigger: 'cli', method: 'CLI', input: { body: { key: 'timeout', fail: 10 } } })
    expect(outcome).toMatchObject({ kind: 'failed', error: 'timeout', nodeId: 'call' })
    expect(Date.now() - began).toBeLessThan(3_000)
  })
})

describe('call, each and wait', () => {
  it('call: runs the flow with its input and outputs its End', async () => {
    const outcome = await run('order', { qty: 4 })
    expect(outcome).toMatchObject({ kind: 'response', body: { status: 200, body: { total: 8 } } })
    const priced = stepsOf(outcome).find((step) => step.nodeId === 'priced')
    expect(priced?.calls?.map((call) => [call.flow, call.steps.map((step) => step.nodeId)])).toEqual([['price', ['start', 'check', 'done']]])
    if (outcome.kind === 'response') expect(outcome.record.ports).toEqual([])
  })

  it('call: a 4xx End of the callee is output, not a failure', async () => {
    expect(await run('order', { qty: 500 })).toMatchObject({ kind: 'response', body: { status: 422, body: { error: 'too many' } } })
  })

  it("call: an input the callee's Start refuses fails the node", async () => {
    const outcome = await run('order', { qty: 0 })
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'priced', error: 'the input for flow "price" is not valid: body/qty: must be >= 1' })
  })

  it('each: results in item order, failed counts 4xx answers and failed calls', async () => {
    const outcome = await run('bulk', { lines: [3, 500, 1, 0, 2] })
    expect(outcome.kind).toBe('response')
    const body = (outcome as { body: { results: { status: number; body: unknown }[]; failed: number } }).body
    expect(
      body.results.map((result) => result.status),
      JSON.stringify(body),
    ).toEqual([200, 422, 200, 400, 200])
    expect(body.results[0]).toEqual({ status: 200, body: { total: 6 } })
    expect(body.results[3]?.body).toEqual({ error: expect.stringContaining('body/qty: must be >= 1') })
    expect(body.failed).toBe(2)
    const each = stepsOf(outcome).find((step) => step.nodeId === 'all')
    expect(each?.calls).toHaveLength(5)
  })

  it('each: an empty list, or none, gives no results', async () => {
    expect(await run('bulk', { lines: [] })).toMatchObject({ kind: 'response', body: { results: [], failed: 0 } })
    expect(await run('bulk', {})).toMatchObject({ kind: 'response', body: { results: [], failed: 0 } })
  })

  it('each: items that are not a list fail the node', async () => {
    const text = await projectFromText(
      { ...flows(server.url), bulk: flows(server.url).bulk!.replace(`"{{= [start.lines.{'qty': $}] }}"`, '"{{ start.lines }}"') },
      { settings: 'limits: { expressionMs: 2000 }\n' },
    )
    expect(await run('bulk', { lines: 'x' }, text)).toMatchObject({
      kind: 'failed',
      nodeId: 'all',
      error: expect.stringContaining('each needs items to be a list'),
    })
  })

  it('wait 0 ms', async () => {
    const outcome = await run('pause', { ms: 0 })
    expect(outcome.kind).toBe('response')
    expect((outcome as { body: { waited: number } }).body.waited).toBeGreaterThanOrEqual(0)
  })

  // Node's timers count from the loop's cached clock and can fire a millisecond early; a wait never does.
  it('a wait of ms waits at least ms, every time', async () => {
    const waited: number[] = []
    for (let round = 0; round < 40; round++) {
      const outcome = await run('pause', { ms: 3 })
      waited.push((outcome as { body: { waited: number } }).body.waited)
    }
    expect(waited.filter((ms) => ms < 3)).toEqual([])
  })

  it('wait is cut short by the run timeout', async () => {
    const short = { ...project, settings: { ...project.settings, limits: { ...project.settings.limits, runTimeoutMs: 100 } } }
    const began = Date.now()
    expect(await run('pause', { ms: 60_000 }, short)).toMatchObject({ kind: 'failed', nodeId: 'nap', error: 'timeout' })
    expect(Date.now() - began).toBeLessThan(5_000)
  })

  it("a wait past a timer's range still waits: the run timeout stops it, with no timer overflow warning", async () => {
    const short = { ...project, settings: { ...project.settings, limits: { ...project.settings.limits, runTimeoutMs: 100 } } }
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    process.on('warning', onWarning)
    try {
      expect(await run('pause', { ms: 3_000_000_000 }, short)).toMatchObject({ kind: 'failed', nodeId: 'nap', error: 'timeout' })
      await new Promise((resolve) => setTimeout(resolve, 20))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings).not.toContain('TimeoutOverflowWarning')
  })

  it('wait refuses a negative time', async () => {
    expect(await run('pause', { ms: -1 })).toMatchObject({ kind: 'failed', nodeId: 'nap', error: expect.stringContaining('wait needs ms') })
  })
})
