// What a hostile caller gets back (issue 20, SPEC §17): traces only for whom the project allows,
// 400 answers of bounded size, failure reasons capped wherever they are stored or shown, schema
// patterns that cannot freeze the server, and a tick that does not let secrets be guessed at speed.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from '../helpers.js'
import { jsonPost, startTestServer } from '../http/setup.js'

afterAll(cleanupTempDirs)

const TRACE_FLOW = `name: Echo
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { word: { type: string } } } }, next: done }
  - { id: done, type: end, name: Done, body: { word: "{{start.word}}" } }
`

describe('trace: loopback | anyone | never', () => {
  const traced = async (settings: string | null, clientIp: string) => {
    const server = await startTestServer({
      flows: { 'echo.yaml': TRACE_FLOW },
      settings: settings ? [['timezone: UTC', `timezone: UTC\ntrace: ${settings}`]] : [],
      app: { fallbackClientIp: clientIp },
    })
    try {
      const response = await server.request('/api/run/shop/echo?_trace=1', jsonPost({ word: 'hi' }))
      expect(response.status).toBe(200)
      const body = await response.json()
      return 'trace' in body
    } finally {
      await server.close()
    }
  }

  it('gives a trace to loopback callers only by default; others get the plain answer', async () => {
    expect(await traced(null, '127.0.0.1')).toBe(true)
    expect(await traced(null, '203.0.113.9')).toBe(false)
  })

  it('a caller who may not trace gets the plain answer even for a malformed flag', async () => {
    const server = await startTestServer({ flows: { 'echo.yaml': TRACE_FLOW }, app: { fallbackClientIp: '203.0.113.9' } })
    try {
      const response = await server.request('/api/run/shop/echo?_trace=junk', jsonPost({ word: 'hi' }))
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ word: 'hi' })
    } finally {
      await server.close()
    }
  })

  it('anyone and never', async () => {
    expect(await traced('anyone', '203.0.113.9')).toBe(true)
    expect(await traced('never', '127.0.0.1')).toBe(false)
  })

  it('a value other than the three is a load error of flowctl.yaml', async () => {
    const failed = await startTestServer({ settings: [['timezone: UTC', 'timezone: UTC\ntrace: everyone']] }).then(
      () => null,
      (error: { problems?: { message: string; line: number }[] }) => error,
    )
    expect(failed?.problems?.[0]?.message).toMatch(/trace.*loopback, anyone, never/)
  })
})

const WAIT_FLOW = `name: Nap
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { ms: { type: string } } } }, next: nap }
  - { id: nap, type: wait, name: Nap, ms: "{{ start.ms }}", next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`

const STRICT_FLOW = `name: Strict
nodes:
  - id: start
    type: start
    name: Start
    method: post
    inputs: { body: { type: object, additionalProperties: false, properties: { a: { type: string } } } }
    next: done
  - { id: done, type: end, name: Done, body: { ok: true } }
`

describe('bounded answers', () => {
  it('a 400 lists at most 20 errors, then "… and N more"', async () => {
    const server = await startTestServer({ flows: { 'strict.yaml': STRICT_FLOW } })
    try {
      const body: Record<string, number> = {}
      for (let i = 0; i < 5_000; i++) body[`k${i}`] = i
      const response = await server.request('/api/run/shop/strict', jsonPost(body))
      expect(response.status).toBe(400)
      const answer = await response.json()
      expect(answer.errors).toHaveLength(21)
      expect(answer.errors[20]).toBe('… and 4980 more')
      // The terminal line is capped the same way.
      const line = server.logs.find((entry) => entry.startsWith('400 shop/strict'))!
      expect(line.length).toBeLessThan(12_000)
    } finally {
      await server.close()
    }
  })

  it('a failure reason quoting a 1 MB input is stored and shown capped at 2,000 characters', async () => {
    const server = await startTestServer({ flows: { 'nap.yaml': WAIT_FLOW } })
    try {
      const response = await server.request('/api/run/shop/nap', jsonPost({ ms: 'z'.repeat(1_000_000) }))
      expect(response.status).toBe(500)
      const runId = response.headers.get('x-run-id')!
      const runs = await (await server.request('/api/runs/shop')).json()
      const record = runs.find((run: { id: string }) => run.id === runId)
      expect(record.error.length).toBeLessThanOrEqual(2_000)
      expect(record.error).toMatch(/more characters\)$/)
      // The stored run keeps the input (bounded by bodyLimitBytes); its reasons are capped.
      const stored = await (await server.request(`/api/runs/shop/${runId}`)).json()
      expect(stored.error.length).toBeLessThanOrEqual(2_000)
      const status = await (await server.request('/api/status')).text()
      expect(status.length).toBeLessThan(50_000)
      const page = await (await server.request('/status')).text()
      expect(page.length).toBeLessThan(100_000)
      expect(server.logs.join('\n').length).toBeLessThan(20_000)
    } finally {
      await server.close()
    }
  })
})

describe('ReDoS through a schema pattern', () => {
  const PATTERN_FLOW = `name: Pattern
nodes:
  - id: start
    type: start
    name: Start
    method: post
    inputs: { body: { type: object, properties: { s: { type: string, pattern: "^(a+)+$" } } } }
    next: done
  - { id: done, type: end, name: Done, body: { ok: true } }
`

  it("'a'*32+'!' against ^(a+)+$ answers 400 without blocking the event loop", async () => {
    const server = await startTestServer({ flows: { 'pattern.yaml': PATTERN_FLOW } })
    try {
      // The pattern's warning (the flow may have others, such as a summary it shares with other flows).
      const problem = server.workspace.get('shop')!.project.problems.find((p) => p.file === 'flows/pattern.yaml' && /backtrack/.test(p.message))
      expect(problem).toMatchObject({ severity: 'warning', line: 7 })
      expect(problem!.message).toMatch(/backtrack catastrophically/)
      // Compile once before measuring.
      expect((await server.request('/api/run/shop/pattern', jsonPost({ s: 'aaa' }))).status).toBe(200)
      const delay = monitorEventLoopDelay({ resolution: 10 })
      delay.enable()
      const response = await server.request('/api/run/shop/pattern', jsonPost({ s: `${'a'.repeat(32)}!` }))
      delay.disable()
      expect(response.status).toBe(400)
      expect((await response.json()).errors).toEqual(['body/s: must match pattern "^(a+)+$"'])
      // Before the fix this request blocked for about 15 s; RE2 answers in milliseconds.
      expect(delay.max / 1e6).toBeLessThan(1_000)
    } finally {
      await server.close()
    }
  })

  it('a catastrophic pattern that only a backtracking engine can run is a load error', async () => {
    const flow = PATTERN_FLOW.replace('^(a+)+$', '^(?=a)(a+)+$').replace('name: Pattern', 'name: Looking')
    const server = await startTestServer({ flows: { 'looking.yaml': flow } })
    try {
      const { project } = server.workspace.get('shop')!
      expect(project.flows.has('looking')).toBe(false)
      expect(project.problems.find((p) => p.file === 'flows/looking.yaml')).toMatchObject({ severity: 'error', line: 7 })
    } finally {
      await server.close()
    }
  })
})

describe('invalid header names', () => {
  it('in inputs.headers or auth.header are load errors with their position, not a 500 on every request', async () => {
    const flow = `name: Headers
nodes:
  - id: start
    type: start
    name: Start
    method: get
    auth: { type: apiKey, key: "\${secrets.ORDERS_TOKEN}", header: "X Api Key" }
    inputs: { headers: { type: object, properties: { "bad:name": { type: string } } } }
    next: done
  - { id: done, type: end, name: Done, body: { ok: true } }
`
    const server = await startTestServer({ flows: { 'headers.yaml': flow } })
    try {
      const problems = server.workspace.get('shop')!.project.problems.filter((p) => p.file === 'flows/headers.yaml')
      expect(problems.map((p) => [p.severity, p.line])).toEqual([
        ['error', 7],
        ['error', 8],
      ])
      expect(problems[0]!.message).toMatch(/auth.header "X Api Key" is not a valid HTTP header name/)
      expect(problems[1]!.message).toMatch(/"bad:name" is not a valid HTTP header name/)
      expect((await server.request('/api/run/shop/headers')).status).toBe(404)
    } finally {
      await server.close()
    }
  })
})

describe('the tick endpoint', () => {
  it('answers 429 with Retry-After after 10 failed secrets from one address, even for the right secret', async () => {
    const server = await startTestServer({ app: { cronSecret: 'the-right-cron-secret', fallbackClientIp: '203.0.113.50' } })
    try {
      const statuses: number[] = []
      for (let i = 0; i < 12; i++) {
        const response = await server.request('/api/cron/tick', { method: 'POST', headers: { authorization: `Bearer guess-${i}` } })
        statuses.push(response.status)
      }
      expect(statuses).toEqual([...Array(10).fill(401), 429, 429])
      const blocked = await server.request('/api/cron/tick', { method: 'POST', headers: { authorization: 'Bearer the-right-cron-secret' } })
      expect(blocked.status).toBe(429)
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(Number(blocked.headers.get('retry-after'))).toBeLessThanOrEqual(10)
    } finally {
      await server.close()
    }
  })

  it('the right secret still works for a client that did not guess', async () => {
    const server = await startTestServer({ app: { cronSecret: 'the-right-cron-secret' } })
    try {
      const response = await server.request('/api/cron/tick', { method: 'POST', headers: { authorization: 'Bearer the-right-cron-secret' } })
      expect(response.status).toBe(200)
    } finally {
      await server.close()
    }
  })
})

describe('maskedReason', () => {
  it('masks a secret that straddles the cut, and counts what was cut', async () => {
    const { maskedReason, MAX_REASON_CHARS } = await import('../../src/flow/reason.js')
    const secret = 'straddling-secret-value'
    const reason = `${'x'.repeat(MAX_REASON_CHARS - 40)}${secret}${'y'.repeat(1_000_000)}`
    const capped = maskedReason(reason, new Map([['S', secret]]))
    expect(capped.length).toBeLessThanOrEqual(MAX_REASON_CHARS)
    expect(capped).not.toContain('straddling')
    expect(capped).toContain('***')
    expect(capped).toMatch(new RegExp(`… \\(${reason.length - MAX_REASON_CHARS} more characters\\)$`))
    // Short reasons are masked and kept whole.
    expect(maskedReason(`token ${secret}`, new Map([['S', secret]]))).toBe('token ***')
  })
})
