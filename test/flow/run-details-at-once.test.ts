// The usual run's stored details are made with one JSON.stringify each (detailsAtOnce); the text
// must be exactly what the step-by-step path (masking and cutting each output) makes, and the
// quick path must step aside whenever a secret shows or a cap is reached.
import { describe, expect, it } from 'vitest'
import { detailsAtOnce, detailsStepByStep, type DetailsSource } from '../../src/flow/run-details.js'
import type { TraceStep } from '../../src/model/run.js'

/** A small seeded generator (mulberry32), so a failure names its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const TEXTS = [
  '',
  'ok',
  'Big Order',
  'line\nbreak',
  'quote " and \\ slash',
  'tab\t',
  'é ü ß',
  '日本語',
  '😀 emoji',
  '\u0001 control',
  '</script>',
  'aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQ=',
]

function value(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 2 ? 6 : 9))
  switch (pick) {
    case 0:
      return TEXTS[Math.floor(next() * TEXTS.length)]
    case 1:
      return Math.floor(next() * 2000) - 1000
    case 2:
      return next() * 1e6
    case 3:
      return next() < 0.5
    case 4:
      return null
    case 5:
      return TEXTS[Math.floor(next() * TEXTS.length)]!.repeat(1 + Math.floor(next() * 4))
    case 6:
      return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1))
    default: {
      const out: Record<string, unknown> = {}
      for (let i = Math.floor(next() * 4); i > 0; i--) out[TEXTS[Math.floor(next() * TEXTS.length)]! || 'k'] = value(next, depth + 1)
      if (next() < 0.2) out.skipped = undefined
      return out
    }
  }
}

function steps(next: () => number, depth: number): TraceStep[] {
  return Array.from({ length: 1 + Math.floor(next() * 4) }, (_, i) => {
    const step: TraceStep = {
      nodeId: `node-${i}`,
      type: ['set', 'if', 'insert', 'call', 'end'][i % 5]!,
      name: TEXTS[Math.floor(next() * TEXTS.length)]!,
      port: next() < 0.3 ? null : 'out',
      durationMs: Math.round(next() * 10000) / 100,
      output: next() < 0.1 ? undefined : value(next, 0),
    }
    if (next() < 0.2) step.attempt = 1 + Math.floor(next() * 3)
    if (next() < 0.1) step.reused = true
    if (depth < 2 && next() < 0.2) step.calls = [{ flow: 'child', steps: steps(next, depth + 1) }]
    return step
  })
}

function source(seed: number, overrides: Partial<DetailsSource> = {}): DetailsSource {
  const next = random(seed)
  return {
    input: { body: value(next, 0), path: { id: 'a1' }, query: { page: 2 }, headers: next() < 0.5 ? {} : { 'x-tenant': 'acme' } },
    storedInputBytes: 65_536,
    runId: `run-${seed}`,
    durationMs: Math.round(next() * 100000) / 100,
    steps: steps(next, 0),
    secrets: new Map([['TOKEN', 'not-in-any-generated-text-7f3a']]),
    traceBytes: 1_048_576,
    ...overrides,
  }
}

describe('stored run details made at once', () => {
  it('are the same text as step by step, over 3,000 generated runs', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const details = source(seed)
      const quick = detailsAtOnce(details)
      expect(quick, `seed ${seed}`).not.toBeNull()
      expect(quick, `seed ${seed}`).toEqual(detailsStepByStep(details))
      // Both are JSON a reader can parse back.
      JSON.parse(quick!.trace!)
    }
  })

  it('step aside when a secret shows in an output, a node name or the input, in any encoded form', () => {
    const secret = 'hunter2-secret-value'
    const secrets = new Map([['KEY', secret]])
    const inOutput = source(7, { secrets })
    inOutput.steps[0]!.output = { header: `Bearer ${secret}` }
    const inName = source(8, { secrets })
    inName.steps[0]!.name = `uses ${secret}`
    const inInput = source(9, { secrets, input: { body: { note: encodeURIComponent(`a ${secret}`) }, path: {}, query: {}, headers: {} } })
    const inBase64 = source(10, { secrets })
    inBase64.steps[0]!.output = { basic: Buffer.from(`user:${secret}`).toString('base64') }
    for (const details of [inOutput, inName, inInput, inBase64]) expect(detailsAtOnce(details)).toBeNull()
    // The step-by-step path masks the output and the input.
    expect(detailsStepByStep(inOutput).trace).not.toContain(secret)
    expect(detailsStepByStep(inBase64).trace).toContain('***')
    expect(detailsStepByStep(inInput).input).toContain('***')
  })

  it('step aside when the trace or the input passes its cap, counted in UTF-8 bytes', () => {
    const big = source(11)
    big.steps[0]!.output = 'x'.repeat(2000)
    expect(detailsAtOnce({ ...big, traceBytes: 1000 })).toBeNull()
    expect(detailsStepByStep({ ...big, traceBytes: 1000 }).trace).toContain('"cut":true')
    // 600 characters of three bytes each: within 1,000 characters, past 1,000 bytes.
    const wide = source(12, { input: { body: '語'.repeat(600), path: {}, query: {}, headers: {} }, storedInputBytes: 1000 })
    expect(detailsAtOnce(wide)).toBeNull()
    expect(JSON.parse(detailsStepByStep(wide).input!).cut).toBe(true)
    // Exactly at the cap still fits.
    const exact = source(13)
    const text = detailsStepByStep(exact)
    expect(detailsAtOnce({ ...exact, traceBytes: Buffer.byteLength(text.trace!) })).toEqual(text)
  })

  it('keep a run without input (a scheduled run) and outputs JSON has no text for as null', () => {
    const details = source(14, { input: null })
    details.steps[0]!.output = undefined
    const quick = detailsAtOnce(details)!
    expect(quick.input).toBeNull()
    expect(JSON.parse(quick.trace!).steps[0].output).toBeNull()
    expect(quick).toEqual(detailsStepByStep(details))
  })

  it('leave out the sub-flow calls that start after the cut (an each of 10,000 calls stays small)', () => {
    const call = (i: number) => ({
      flow: 'child',
      steps: [{ nodeId: 'set', type: 'set', name: 'Set', port: 'out', durationMs: 0.1, output: { item: i, text: 'x'.repeat(50) } }],
    })
    const each: TraceStep = {
      nodeId: 'each',
      type: 'each',
      name: 'Each',
      port: 'out',
      durationMs: 900,
      output: { count: 10_000 },
      calls: Array.from({ length: 10_000 }, (_, i) => call(i)),
    }
    const after: TraceStep = { nodeId: 'done', type: 'end', name: 'Done', port: null, durationMs: 0, output: { ok: true } }
    const details = source(15, { steps: [each, after], traceBytes: 4096 })
    expect(detailsAtOnce(details)).toBeNull()
    const trace = JSON.parse(detailsStepByStep(details).trace!)
    expect(trace.cut).toBe(true)
    expect(detailsStepByStep(details).trace!.length).toBeLessThan(20_000)
    // The calls up to the one that crossed the cap are kept; the later steps of the run still show.
    expect(trace.steps[0].calls.length).toBeGreaterThan(10)
    expect(trace.steps[0].calls.length).toBeLessThan(100)
    expect(trace.steps.map((step: { nodeId: string }) => step.nodeId)).toEqual(['each', 'done'])
    expect(trace.steps[1].output).toContain('[cut:')
  })
})
