// A run whose trace is only stored keeps no steps for sub-flow calls past the stored trace's cut
// (src/flow/trace-meter.ts): the stored trace is the same as when every step is kept (as a `_trace`
// run keeps them), wherever the cut falls, with secrets masked and calls running side by side.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import { TraceMeter } from '../../src/flow/trace-meter.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'
import { buildFlow, buildProject } from './build.js'

let store: Store
beforeAll(async () => {
  store = await openSqliteStore(':memory:')
})
afterAll(async () => {
  await store.close()
})

const SECRET = 'a-rather-long-secret-value'
const BODY = { body: { type: 'object' } }

// fan → each (4 at a time) of mid → call leaf, then each of three leaves: ~20,000 steps for 1,000 items.
const fan = buildFlow('Fan', [
  { id: 'start', type: 'start', method: 'post', inputs: BODY, next: 'outer' },
  { id: 'outer', type: 'call', flow: 'wrap', input: { items: '{{start.items}}' }, next: 'done' },
  { id: 'done', type: 'end', body: { failed: '{{outer.body.failed}}' } },
])
const wrap = buildFlow('Wrap', [
  { id: 'start', type: 'start', inputs: BODY, next: 'all' },
  { id: 'all', type: 'each', items: '{{start.items}}', flow: 'mid', concurrency: 4, next: 'done' },
  { id: 'done', type: 'end', body: { failed: '{{all.failed}}' } },
])
const mid = buildFlow('Mid', [
  { id: 'start', type: 'start', inputs: BODY, next: 'one' },
  { id: 'one', type: 'call', flow: 'leaf', input: { n: '{{start.n}}' }, next: 'three' },
  { id: 'three', type: 'each', items: [{ n: 1 }, { n: 2 }, { n: 3 }], flow: 'leaf', next: 'done' },
  { id: 'done', type: 'end', body: { n: '{{one.body.n}}' } },
])
const leaf = buildFlow('Leaf', [
  { id: 'start', type: 'start', inputs: BODY, next: 'a' },
  { id: 'a', type: 'set', values: { n: '{{start.n}}', key: 'k=${secrets.KEY}', t: 'item {{start.n}} "é😀"' }, next: 'b' },
  { id: 'b', type: 'set', values: { t: '{{a.t}} b' }, next: 'done' },
  { id: 'done', type: 'end', body: { n: '{{a.n}}' } },
])

async function storedTrace(traceBytes: number, trace: boolean): Promise<string> {
  const project = buildProject([fan, wrap, mid, leaf], { limits: { traceBytes }, secrets: { KEY: SECRET } })
  const items = Array.from({ length: 1000 }, (_, n) => ({ n }))
  const outcome = await runFlow({ project, flow: fan, store, trigger: 'http', method: 'POST', input: { body: { items } }, trace })
  if (outcome.kind === 'invalid') throw new Error(outcome.errors.join())
  const stored = await store.history.getRun('test', outcome.runId)
  // Timings and the run id differ from run to run; everything else must not.
  return JSON.stringify(stored!.trace)
    .replaceAll(outcome.runId, 'RUN')
    .replace(/"durationMs":[0-9.e-]+/g, '"durationMs":0')
}

describe('sub-flow steps past the stored trace cut', () => {
  it.each([65_536, 150_000, 300_000, 600_000, 10_000_000])('stores the same trace as a run that keeps every step (traceBytes %i)', async (traceBytes) => {
    const pruned = await storedTrace(traceBytes, false)
    const whole = await storedTrace(traceBytes, true)
    expect(pruned).toBe(whole)
    expect(pruned).not.toContain(SECRET)
    expect(pruned).toContain('"flow":"leaf"')
    // Only the largest budget holds the whole trace; the others are cut part-way.
    expect(pruned.includes('"cut":true')).toBe(traceBytes < 10_000_000)
  })
})

describe('TraceMeter', () => {
  it('passes the cut only after the first 1,000 steps, counting outputs as the stored trace measures them', () => {
    const meter = TraceMeter.forRun(100, new Map([['KEY', SECRET]]))
    for (let step = 0; step < 1000; step++) meter.record('x'.repeat(1000))
    expect(meter.pastCut()).toBe(false)
    // 26 characters of secret count as `***`: 30 + 2 quotes = 35 bytes, then 70, then 105.
    const masked = `${SECRET}${'y'.repeat(30)}`
    meter.record(masked)
    meter.record(masked)
    expect(meter.pastCut()).toBe(false)
    meter.record(masked)
    expect(meter.pastCut()).toBe(true)
  })

  it('counts a called walk in its callers, and what came before it in the called walk', () => {
    const run = TraceMeter.forRun(10, new Map())
    for (let step = 0; step < 1000; step++) run.record(null)
    const first = run.nested()
    const second = run.nested()
    first.record('123456') // 8 bytes
    expect(run.pastCut()).toBe(false)
    first.record('1') // 3 more
    expect(first.pastCut()).toBe(true)
    expect(run.pastCut()).toBe(true)
    // A call that started before those steps did not see them: still a lower bound, never more.
    expect(second.pastCut()).toBe(false)
    expect(run.nested().pastCut()).toBe(true)
  })
})
