// What history keeps of a run (SPEC §14): input and trace per `history.keep`, outputs capped at
// `limits.traceBytes` with a marker, secrets as `***`, replayOf; and replay itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import { replayRun } from '../../src/flow/replay.js'
import { cutMarker } from '../../src/flow/run-details.js'
import type { HistoryKeep } from '../../src/model/project.js'
import { openSqliteStore } from '../../src/store/sqlite.js'
import type { Store } from '../../src/model/store.js'
import { buildFlow, buildProject } from './build.js'

let store: Store
beforeAll(async () => {
  store = await openSqliteStore(':memory:')
})
afterAll(async () => {
  await store.close()
})

const SECRET = 'hunter2-secret'

const echo = buildFlow('Echo', [
  {
    id: 'start',
    type: 'start',
    method: 'post',
    inputs: {
      headers: { type: 'object', properties: { 'x-tenant': { type: 'string' } } },
      query: { type: 'object', properties: { page: { type: 'integer', default: 1 } } },
      body: { type: 'object', properties: { text: { type: 'string' }, fail: { type: 'boolean' } } },
    },
    next: 'check',
  },
  { id: 'check', type: 'if', name: 'Fail?', condition: { left: '{{start.fail}}', op: 'eq', right: true }, next: { true: 'boom', false: 'copy' } },
  { id: 'boom', type: 'http', name: 'Boom', url: 'http://127.0.0.1:1/', next: 'done' },
  { id: 'copy', type: 'set', name: 'Copy', values: { text: '{{start.text}}', key: 'k=${secrets.KEY}' }, next: 'done' },
  { id: 'done', type: 'end', name: 'Done', body: { ok: true } },
])

function projectWith(keep: HistoryKeep, traceBytes = 65_536) {
  return buildProject([echo], { keep, limits: { traceBytes }, secrets: { KEY: SECRET } })
}

async function runEcho(keep: HistoryKeep, body: Record<string, unknown>, traceBytes?: number) {
  const project = projectWith(keep, traceBytes)
  const outcome = await runFlow({
    project,
    flow: echo,
    store,
    trigger: 'http',
    method: 'POST',
    input: { body, query: { page: '3' }, headers: { 'x-tenant': 't1' } },
  })
  if (outcome.kind === 'invalid') throw new Error(outcome.errors.join())
  return { project, outcome, stored: (await store.getRun('test', outcome.runId))! }
}

describe('stored input and trace', () => {
  it('keep: all stores the validated input (coerced, defaults applied) and every step', async () => {
    const { stored, outcome } = await runEcho('all', { text: 'hello' })
    expect(stored.input).toEqual({ body: { text: 'hello' }, path: {}, query: { page: 3 }, headers: { 'x-tenant': 't1' } })
    expect(stored.trace?.runId).toBe(outcome.runId)
    expect(stored.trace?.steps.map((s) => [s.nodeId, s.port])).toEqual([
      ['start', 'out'],
      ['check', 'false'],
      ['copy', 'out'],
      ['done', null],
    ])
    expect(stored.trace?.cut).toBe(false)
    // No `?_trace` asked: the caller's outcome carries none, the store has it.
    expect(outcome.trace).toBeUndefined()
  })

  it.each([
    ['all', false, true],
    ['all', true, true],
    ['failed', false, false],
    ['failed', true, true],
    ['none', false, false],
    ['none', true, false],
  ] as const)('keep: %s, failed run %s → details kept: %s', async (keep, fail, kept) => {
    const { stored } = await runEcho(keep, { text: 'x', fail })
    expect(stored.status).toBe(fail ? 'error' : 'success')
    expect(stored.input !== null).toBe(kept)
    expect(stored.trace !== null).toBe(kept)
  })

  it('shows secrets as *** in the input and in outputs', async () => {
    const { stored } = await runEcho('all', { text: `my ${SECRET}` })
    const text = JSON.stringify(stored)
    expect(text).not.toContain(SECRET)
    expect(stored.input?.body).toEqual({ text: 'my ***' })
    expect(stored.trace?.steps.find((s) => s.nodeId === 'copy')?.output).toEqual({ text: 'my ***', key: 'k=***' })
  })

  it('cuts outputs past limits.traceBytes with a marker, keeping the steps', async () => {
    const { stored } = await runEcho('all', { text: 'y'.repeat(3000) }, 2048)
    const steps = stored.trace!.steps
    expect(stored.trace!.cut).toBe(true)
    expect(steps).toHaveLength(4)
    // The first output (3 KB) crosses the cap: a prefix of its JSON, then the marker.
    expect(String(steps[0]!.output)).toMatch(/^\{"text":"y+… \[cut: /)
    expect(Buffer.byteLength(String(steps[0]!.output))).toBeLessThan(2048 + 200)
    expect(steps.slice(1).map((s) => s.output)).toEqual([cutMarker(2048), cutMarker(2048), cutMarker(2048)])
    expect(JSON.stringify(stored.trace).length).toBeLessThan(4096)
  })
})

describe('replayRun', () => {
  it('runs the stored input through the current flow and records replayOf', async () => {
    const { project, outcome } = await runEcho('all', { text: 'again' })
    const replay = await replayRun({ project, store, runId: outcome.runId, trigger: 'cli', method: 'CLI', trace: true })
    expect(replay.outcome.kind).toBe('response')
    const stored = await store.getRun('test', (replay.outcome as { runId: string }).runId)
    expect(stored).toMatchObject({
      replayOf: outcome.runId,
      method: 'CLI',
      input: { body: { text: 'again' }, query: { page: 3 }, headers: { 'x-tenant': 't1' } },
    })
  })

  it.each([['an unknown run', 'nope', 'RUN_NOT_FOUND']])('refuses %s', async (_name, runId, code) => {
    await expect(replayRun({ project: projectWith('all'), store, runId, trigger: 'cli' })).rejects.toMatchObject({ code })
  })

  it('refuses a run that kept no input (REPLAY_UNAVAILABLE)', async () => {
    const { project, outcome } = await runEcho('none', { text: 'gone' })
    await expect(replayRun({ project, store, runId: outcome.runId, trigger: 'cli' })).rejects.toMatchObject({ code: 'REPLAY_UNAVAILABLE' })
  })
})

describe('stored trace of retries and sub-flows', () => {
  it('keeps each attempt and the steps of called flows, nested under the calling step, masked', async () => {
    const { runDetailsText } = await import('../../src/flow/run-details.js')
    const secrets = new Map([['TOKEN', SECRET]])
    const details = runDetailsText({
      input: null,
      runId: 'r1',
      durationMs: 3,
      secrets,
      traceBytes: 65536,
      steps: [
        { nodeId: 'lookup', type: 'http', name: 'Lookup', port: 'out', durationMs: 1, output: { status: 503 }, attempt: 1 },
        {
          nodeId: 'sub',
          type: 'call',
          name: 'Sub',
          port: 'out',
          durationMs: 2,
          output: { status: 200 },
          calls: [{ flow: 'quote', steps: [{ nodeId: 'price', type: 'set', name: 'Price', port: 'out', durationMs: 0, output: { token: SECRET } }] }],
        },
      ],
    })
    const trace = JSON.parse(details.trace!) as { steps: Array<Record<string, unknown>> }
    expect(trace.steps[0]).toMatchObject({ nodeId: 'lookup', attempt: 1 })
    expect(trace.steps[1]).toMatchObject({ nodeId: 'sub', calls: [{ flow: 'quote', steps: [{ nodeId: 'price', output: { token: '***' } }] }] })
    expect(details.trace).not.toContain(SECRET)
  })
})
