// What history keeps of a run (SPEC §14): input and trace per `history.keep`, outputs capped at
// `limits.traceBytes` and the input at `limits.storedInputBytes` (SPEC §18) with a marker, secrets
// as `***`, replayOf; and replay itself (refused for a cut input).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import { replayRun } from '../../src/flow/replay.js'
import { cutMarker, inputCutMarker, runDetailsText, storedInputText } from '../../src/flow/run-details.js'
import type { HistoryKeep } from '../../src/model/project.js'
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
  return { project, outcome, stored: (await store.history.getRun('test', outcome.runId))! }
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
    const stored = await store.history.getRun('test', (replay.outcome as { runId: string }).runId)
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
      storedInputBytes: 65536,
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

describe('stored input past limits.storedInputBytes (SPEC §18)', () => {
  const LIMIT = 65_536

  it('stores a 200 KB input cut, under the limit, with the marker, and refuses to replay it', async () => {
    const project = buildProject([echo], { secrets: { KEY: SECRET } })
    const text = `${SECRET} "quoted" ünïcödé 😀 `.repeat(5000) // quotes and non-ASCII grow when escaped
    const outcome = await runFlow({
      project,
      flow: echo,
      store,
      trigger: 'http',
      method: 'POST',
      input: { body: { text }, query: { page: '3' }, headers: { 'x-tenant': 't1' } },
    })
    if (outcome.kind === 'invalid') throw new Error(outcome.errors.join())
    expect(outcome.kind).toBe('response')
    expect(Buffer.byteLength(JSON.stringify({ text }))).toBeGreaterThan(200_000)
    const row = await store.history.getRun('test', outcome.runId)
    expect(Buffer.byteLength(JSON.stringify(row!.input))).toBeLessThanOrEqual(LIMIT)
    expect(row!.input).toMatchObject({ cut: true, path: {}, query: { page: 3 }, headers: { 'x-tenant': 't1' } })
    const body = row!.input!.body as string
    expect(body.startsWith(`{"text":"*** \\"quoted\\" ünïcödé 😀 `)).toBe(true)
    expect(body.endsWith(`… ${inputCutMarker(LIMIT)}`)).toBe(true)
    expect(JSON.stringify(row)).not.toContain(SECRET)
    await expect(replayRun({ project, store, runId: outcome.runId, trigger: 'cli' })).rejects.toMatchObject({
      code: 'REPLAY_UNAVAILABLE',
      message: expect.stringContaining('limits.storedInputBytes'),
    })
  })

  it('stores a small input whole, without a cut flag', async () => {
    const { stored } = await runEcho('all', { text: 'y'.repeat(60_000) })
    expect(stored.input).toEqual({ body: { text: 'y'.repeat(60_000) }, path: {}, query: { page: 3 }, headers: { 'x-tenant': 't1' } })
  })

  it.each([1024, 4096, LIMIT])('never goes over the limit (%i bytes), whatever the text', (limit) => {
    for (const unit of ['a', '"', '\\', '\u0001', 'é', '😀', '"😀\\']) {
      const input = { body: { text: unit.repeat(limit) }, path: {}, query: {}, headers: {} }
      const text = storedInputText(input, new Map(), limit)
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(limit)
      const parsed = JSON.parse(text) as { body: string; cut: boolean }
      expect(parsed.cut).toBe(true)
      expect(parsed.body.endsWith(inputCutMarker(limit))).toBe(true)
      expect(parsed.body.length).toBeGreaterThan(limit / 8) // a useful prefix, not only the marker
      expect(parsed.body).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/) // no half of a surrogate pair
    }
  })

  it('cuts the whole input when its path, query and header values alone take over half the limit', () => {
    const input = { body: { a: 1 }, path: {}, query: { q: 'x'.repeat(5000) }, headers: {} }
    const parsed = JSON.parse(storedInputText(input, new Map(), 4096)) as Record<string, unknown>
    expect(parsed).toMatchObject({ path: {}, query: {}, headers: {}, cut: true })
    expect(String(parsed.body)).toMatch(/"q":"x+… \[cut: /)
  })
})

describe('the stored trace of a run with many sub-flow calls', () => {
  it('leaves out the calls that start after the cut (an each of 10,000 calls stays small)', () => {
    const call = (i: number) => ({
      flow: 'child',
      steps: [{ nodeId: 'set', type: 'set', name: 'Set', port: 'out', durationMs: 0.1, output: { item: i, text: 'x'.repeat(50) } }],
    })
    const each = {
      nodeId: 'each',
      type: 'each',
      name: 'Each',
      port: 'out',
      durationMs: 900,
      output: { count: 10_000 },
      calls: Array.from({ length: 10_000 }, (_, i) => call(i)),
    }
    const done = { nodeId: 'done', type: 'end', name: 'Done', port: null, durationMs: 0, output: { ok: true } }
    const details = runDetailsText({
      input: null,
      storedInputBytes: 65_536,
      runId: 'r1',
      durationMs: 1000,
      steps: [each, done],
      secrets: new Map(),
      traceBytes: 4096,
    })
    expect(details.trace!.length).toBeLessThan(20_000)
    const trace = JSON.parse(details.trace!)
    expect(trace.cut).toBe(true)
    // The calls up to the one that crossed the cap are kept; the run's later steps still show, with the marker.
    expect(trace.steps[0].calls.length).toBeGreaterThan(10)
    expect(trace.steps[0].calls.length).toBeLessThan(100)
    expect(trace.steps.map((step: { nodeId: string }) => step.nodeId)).toEqual(['each', 'done'])
    expect(trace.steps[1].output).toContain('[cut:')
  })
})

describe('the stored trace of steps with unusual names', () => {
  it('writes each id, kind, name and port as JSON.stringify does', () => {
    const names = ['Plain', 'Quote "q"', 'Back\\slash', 'Tab\tand\nnewline', 'Control \u0001', 'Ünïcödé ✓', 'Emoji 😀', 'Lone \ud800 half', '', '  ']
    const steps = names.map((name, i) => ({
      nodeId: `n${i}-${name}`,
      type: i % 2 ? 'set' : `kind ${name}`,
      name,
      port: i % 3 ? name : null,
      durationMs: i,
      output: { i },
    }))
    const reference = `[${steps
      .map(
        (step) =>
          `{"nodeId":${JSON.stringify(step.nodeId)},"type":${JSON.stringify(step.type)},"name":${JSON.stringify(step.name)},"port":${JSON.stringify(step.port)},"durationMs":${step.durationMs},"output":${JSON.stringify(step.output)}}`,
      )
      .join(',')}]`
    for (let round = 0; round < 2; round++) {
      const details = runDetailsText({ input: null, storedInputBytes: 65_536, runId: 'r1', durationMs: 1, steps, secrets: new Map(), traceBytes: 65_536 })
      expect(details.trace).toBe(`{"runId":"r1","durationMs":1,"steps":${reference},"cut":false}`)
      expect(JSON.parse(details.trace!).steps.map((step: { name: string }) => step.name)).toEqual(names.map((name) => JSON.parse(JSON.stringify(name))))
    }
  })
})

describe('a step whose output is the input body', () => {
  const details = (body: Record<string, unknown>, storedInputBytes: number) =>
    runDetailsText({
      input: { body, path: {}, query: {}, headers: {} },
      storedInputBytes,
      runId: 'r1',
      durationMs: 1,
      steps: [{ nodeId: 'start', type: 'start', name: 'Start', port: 'out', durationMs: 0, output: body }],
      secrets: new Map([['TOKEN', SECRET]]),
      traceBytes: 65_536,
    })

  it.each([65_536, 64])('is masked in the trace as in the input when it holds a secret (input cap %i)', (cap) => {
    const stored = details({ note: `x ${SECRET}`, other: 'y'.repeat(100) }, cap)
    expect(stored.input).not.toContain(SECRET)
    expect(stored.trace).not.toContain(SECRET)
    expect(JSON.parse(stored.trace!).steps[0].output).toEqual({ note: 'x ***', other: 'y'.repeat(100) })
  })

  it.each([65_536, 64])('is written as its JSON when it holds none (input cap %i)', (cap) => {
    const body = { note: 'plain "quoted" ü', other: 'y'.repeat(100) }
    const stored = details(body, cap)
    expect(JSON.parse(stored.trace!).steps[0].output).toEqual(body)
    expect(stored.trace).toContain(`"output":${JSON.stringify(body)}`)
  })
})
