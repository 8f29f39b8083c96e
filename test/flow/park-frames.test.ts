// A wait inside a called flow parks the whole run (SPEC §22, §13), through the real loader, engine
// and SQLite wait store: the parked state is the run's flow stopped at its call node plus a stack of
// frames (each called flow's outputs and steps, the innermost stopped at its wait). Resuming goes on
// in the innermost flow, hands its End to the call node as a finished sub-flow would, and goes on in
// each caller. States without frames (as stored before) are top-level ones and still resume.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resumeRun, runFlow } from '../../src/flow/engine.js'
import { openParking, wakeOutput, type ParkedState } from '../../src/flow/park.js'
import type { Project } from '../../src/model/project.js'
import type { RunOutcome, TraceStep } from '../../src/model/run.js'
import type { Store } from '../../src/model/store.js'
import type { ClaimedParkedRun } from '../../src/model/waits.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { cleanupTempDirs } from '../helpers.js'
import { projectFromText } from './project-from-text.js'

const INNER = `
name: Inner
nodes:
  - { id: start, type: start, name: Start, http: false, inputs: { body: { type: object } }, next: first }
  - { id: first, type: wait, name: First, until: callback, next: { out: second, timeout: late } }
  - { id: second, type: wait, name: Second, until: callback, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { k: "{{ start.k }}", a: "{{ first.body.v }}", b: "{{ second.body.v }}", url: "{{ run.resumeUrl }}" } }
  - { id: late, type: end, name: Late, body: { late: true } }
`

const FLOWS: Record<string, string> = {
  outer: `
name: Outer
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, inputs: { body: { type: object } }, next: pre }
  - { id: pre, type: set, name: Pre, values: { k: "{{ start.k }}", key: "\${secrets.API_KEY}" }, next: call }
  - { id: call, type: call, name: Call, flow: mid, input: { k: "{{ pre.k }}" }, next: done }
  - { id: done, type: end, name: Done, body: { k: "{{ pre.k }}", status: "{{ call.status }}", answer: "{{ call.body }}" } }
`,
  mid: `
name: Mid
nodes:
  - { id: start, type: start, name: Start, http: false, inputs: { body: { type: object } }, next: before }
  - { id: before, type: set, name: Before, values: { m: "mid-{{ start.k }}", key: "\${secrets.API_KEY}" }, next: call }
  - { id: call, type: call, name: Call, flow: inner, input: { k: "{{ start.k }}" }, next: done }
  - { id: done, type: end, name: Done, body: { m: "{{ before.m }}", inner: "{{ call.body }}", status: "{{ call.status }}" } }
`,
  inner: INNER,
  plain: `
name: Plain
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, next: wait }
  - { id: wait, type: wait, name: Wait, until: callback, next: done }
  - { id: done, type: end, name: Done, body: { v: "{{ wait.body.v }}" } }
`,
  fanout: `
name: Fanout
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, next: each }
  - { id: each, type: each, name: Each, items: [1, 2], flow: napper, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{= $count(each.results) }}", slept: "{{= each.results[1].body.slept }}" } }
`,
  napper: `
name: Napper
nodes:
  - { id: start, type: start, name: Start, http: false, next: nap }
  - { id: nap, type: wait, name: Nap, ms: 600, next: done }
  - { id: done, type: end, name: Done, body: { slept: "{{ nap.waitedMs }}" } }
`,
}

const SECRET = 'key-0123456789abcdef'
let store: Store
let project: Project

beforeAll(async () => {
  store = await openSqliteStore(':memory:')
  project = await projectFromText(FLOWS, { settings: 'limits: { inlineWaitMs: 500 }\n', dotenv: `API_KEY=${SECRET}\n` })
})
afterAll(async () => {
  await store.close()
  await cleanupTempDirs()
})

async function start(slug: string, body: unknown): Promise<Exclude<RunOutcome, { kind: 'invalid' }>> {
  const parking = await openParking(store.waits, 'text')
  const outcome = await runFlow({ project, flow: project.flows.get(slug)!, store, trigger: 'http', method: 'POST', input: { body }, parking })
  if (outcome.kind === 'invalid') throw new Error(outcome.errors.join('; '))
  return outcome
}

/** Delivers a callback to the run's current wait and claims it, as the resume route and wait runner do. */
async function deliverAndClaim(runId: string, v: string): Promise<ClaimedParkedRun> {
  const row = await store.waits.lookup('text', runId)
  expect(row?.status).toBe('waiting')
  const payload = JSON.stringify({ body: { v }, receivedAt: new Date().toISOString() })
  expect(await store.waits.deliver('text', runId, row!.seq, payload)).toBe('delivered')
  const claimed = await store.waits.claimDue('text', { limit: 10, leaseMs: 60_000, token: `claim-${runId}-${v}` })
  expect(claimed.map((run) => run.id)).toEqual([runId])
  return claimed[0]!
}

async function resume(claimed: ClaimedParkedRun, on: Project = project): Promise<RunOutcome> {
  const state = JSON.parse(claimed.state) as ParkedState
  const parking = await openParking(store.waits, 'text', { claimToken: claimed.claimToken })
  return resumeRun({
    project: on,
    store,
    state,
    port: claimed.port,
    output: wakeOutput(state, claimed.port, claimed.payload, new Date()),
    parking,
    recordRun: (record, details, response, documents) => store.waits.finish(record, details, claimed.claimToken, JSON.stringify(response), documents),
  })
}

function stepIds(steps: TraceStep[] | undefined): string[] {
  return (steps ?? []).map((step) => step.nodeId)
}

describe('a wait inside a called flow', () => {
  it('parks the run with a frame per called flow, and resumes through them to the caller', async () => {
    const outcome = await start('outer', { k: 'x' })
    expect(outcome).toMatchObject({ kind: 'response', status: 202, body: { status: 'waiting' } })
    const runId = outcome.runId
    // While it waits, the run's record shows its call in progress with the called flows' steps under it.
    const waiting = await store.history.getRun('text', runId)
    expect(waiting).toMatchObject({ status: 'waiting' })
    const pending = waiting!.trace!.steps.at(-1)!
    expect(pending).toMatchObject({ nodeId: 'call', type: 'call', port: null })
    expect(stepIds(pending.calls![0]!.steps)).toEqual(['start', 'before', 'call'])
    expect(stepIds(pending.calls![0]!.steps[2]!.calls![0]!.steps)).toEqual(['start'])
    // Each call in progress says it waits, for what and until when (not a null output).
    const until = (await store.waits.lookup('text', runId))!.dueAt
    const inProgress = { waiting: 'callback', until: new Date(until).toISOString() }
    expect(pending.output).toEqual(inProgress)
    expect(pending.calls![0]!.steps[2]!.output).toEqual(inProgress)
    expect(JSON.stringify(waiting!.trace)).not.toContain(SECRET)

    const first = await deliverAndClaim(runId, 'one')
    const state = JSON.parse(first.state) as ParkedState
    // The run's flow stopped at its call node; the frames go outermost first, the last at the wait.
    expect(state).toMatchObject({ flow: 'outer', nodeId: 'call', kind: 'callback', seq: 1 })
    expect(state.frames!.map((frame) => [frame.flow, frame.nodeId])).toEqual([
      ['mid', 'call'],
      ['inner', 'first'],
    ])
    expect(stepIds(state.steps!)).toEqual(['start', 'pre'])
    expect(stepIds(state.frames![0]!.steps!)).toEqual(['start', 'before'])
    expect(stepIds(state.frames![1]!.steps!)).toEqual(['start'])
    expect(state.frames![0]!.scope.before).toMatchObject({ m: 'mid-x' })
    // Masked like the top level: no secret in any frame, nor the resume token.
    expect(first.state).not.toContain(SECRET)
    expect(state.frames![0]!.scope.before).toMatchObject({ key: '***' })

    // Resumed at the first wait, the inner flow goes on to its second wait and parks the run again.
    const again = await resume(first)
    expect(again).toMatchObject({ kind: 'response', status: 202 })
    expect((await store.waits.lookup('text', runId))?.seq).toBe(2)
    const second = await deliverAndClaim(runId, 'two')
    const state2 = JSON.parse(second.state) as ParkedState
    expect(state2.frames!.map((frame) => [frame.flow, frame.nodeId])).toEqual([
      ['mid', 'call'],
      ['inner', 'second'],
    ])
    expect(state2.frames![1]!.scope.first).toMatchObject({ body: { v: 'one' } })

    // The inner End reaches mid's call node, whose End reaches outer's call node, as finished sub-flows.
    const done = await resume(second)
    expect(done.kind).toBe('response')
    if (done.kind !== 'response') return
    expect(done.status).toBe(200)
    const answer = done.body as { k: string; status: number; answer: { m: string; status: number; inner: Record<string, unknown> } }
    expect(answer).toMatchObject({ k: 'x', status: 200, answer: { m: 'mid-x', status: 201, inner: { k: 'x', a: 'one', b: 'two' } } })
    // A flow that reaches a callback wait through its calls gives its nodes run.resumeUrl.
    expect(answer.answer.inner.url).toMatch(/\/api\/resume\/text\//)

    const stored = await store.history.getRun('text', runId)
    expect(stored).toMatchObject({ status: 'success', httpStatus: 200 })
    const steps = stored!.trace!.steps
    expect(stepIds(steps)).toEqual(['start', 'pre', 'call', 'done'])
    const mid = steps[2]!.calls![0]!
    expect(mid.flow).toBe('mid')
    expect(stepIds(mid.steps)).toEqual(['start', 'before', 'call', 'done'])
    const inner = mid.steps[2]!.calls![0]!
    expect(stepIds(inner.steps)).toEqual(['start', 'first', 'second', 'done'])
    expect(inner.steps[1]).toMatchObject({ port: 'out', output: { body: { v: 'one' } } })
  })

  it('fails the call with a clear reason when the called flow lost its wait while the run was parked', async () => {
    const outcome = await start('outer', { k: 'y' })
    const claimed = await deliverAndClaim(outcome.runId, 'one')
    const changed = await projectFromText(
      // The wait keeps its name (so templates still read `first`) but has another id.
      { ...FLOWS, inner: INNER.replace('id: first,', 'id: other,').replace('next: first', 'next: other') },
      { settings: 'limits: { inlineWaitMs: 500 }\n', dotenv: `API_KEY=${SECRET}\n` },
    )
    const failed = await resume(claimed, changed)
    expect(failed).toMatchObject({ kind: 'failed', nodeId: 'call' })
    if (failed.kind === 'failed')
      expect(failed.error).toMatch(/flow "mid" failed at node "call": flow "inner" failed: node "first" is no longer in flow "inner"/)
    expect(await store.history.getRun('text', outcome.runId)).toMatchObject({ status: 'error', failedNodeId: 'call' })
  })

  it('keeps states without frames (a wait in the run’s own flow) as they were', async () => {
    const outcome = await start('plain', {})
    const claimed = await deliverAndClaim(outcome.runId, 'p')
    const state = JSON.parse(claimed.state) as Record<string, unknown>
    expect(state).toMatchObject({ flow: 'plain', nodeId: 'wait' })
    expect('frames' in state).toBe(false)
    const done = await resume(claimed)
    expect(done).toMatchObject({ kind: 'response', status: 200, body: { v: 'p' } })
  })

  it('does not park inside each: a long sleep in a flow each runs waits inline', async () => {
    const outcome = await start('fanout', {})
    expect(outcome).toMatchObject({ kind: 'response', status: 200, body: { n: 2 } })
    if (outcome.kind === 'response') expect((outcome.body as { slept: number }).slept).toBeGreaterThanOrEqual(550)
    expect(await store.waits.lookup('text', outcome.runId)).toBeNull()
  })
})
