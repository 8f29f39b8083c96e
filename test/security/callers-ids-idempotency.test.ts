// SPEC §19's callers you cannot trust, against the real `flowctl serve`, one finding each:
// - run ids carry 100 bits from the CSPRNG (the red team rebuilt Math.random's state from 16 ids);
// - idempotency answers are kept per caller (tenant B reusing tenant A's key got A's answer, and B's
//   payment was never made), on the embedded store and on PostgreSQL;
// - /api/result checks auth before the run id (unknown ids and missing credentials: one 401), is
//   rate-limited like the Run API and answers CORS preflights;
// - the tick's failed secrets are limited per client address only.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newRunId, RUN_ID_PREFIX_CHARS, RUN_ID_RANDOM_CHARS } from '../../src/internal/ids.js'
import { awayFromMinuteEnd, cleanupTempDirs, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { MAX_PROBE_MS, MAX_RSS_GROWTH, underAttack } from '../e2e/hostile-harness.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

afterAll(cleanupTempDirs)
pgSkipNotice('callers, ids and idempotency (SPEC §19)')

const PAY_TOKEN = 'pay-token-0123456789'
const REFUND_TOKEN = 'refund-token-9876543210'
const ORIGIN = 'https://shop.example'
const RANDOM_ALPHABET = '0123456789abcdefghijklmnopqrstuv'

const FLOWS: Record<string, string> = {
  charge: `name: Charge
nodes:
  - id: start
    type: start
    name: Start
    method: post
    auth: { type: bearer, token: ${PAY_TOKEN} }
    idempotency: { header: Idempotency-Key, ttlSeconds: 600 }
    inputs:
      headers: { type: object, properties: { x-tenant: { type: string } }, required: [x-tenant] }
      body: { type: object, required: [amount], properties: { amount: { type: integer } } }
    next: save
  - { id: save, type: insert, name: Save, collection: payments, document: { tenant: "{{ start.x-tenant }}", amount: "{{ start.amount }}" }, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { tenant: "{{ start.x-tenant }}", amount: "{{ start.amount }}", run: "{{ run.id }}" } }
`,
  'charge-later': `name: Charge Later
nodes:
  - id: start
    type: start
    name: Start
    method: post
    respond: async
    auth: { type: bearer, token: ${PAY_TOKEN} }
    idempotency: { header: Idempotency-Key, ttlSeconds: 600 }
    cors: { origins: ["${ORIGIN}"] }
    inputs:
      headers: { type: object, properties: { x-tenant: { type: string } }, required: [x-tenant] }
      body: { type: object, required: [amount], properties: { amount: { type: integer } } }
    next: done
  - { id: done, type: end, name: Done, status: 201, body: { tenant: "{{ start.x-tenant }}", amount: "{{ start.amount }}" } }
`,
  'refund-later': `name: Refund Later
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, auth: { type: bearer, token: ${REFUND_TOKEN} }, next: done }
  - { id: done, type: end, name: Done, body: { refunded: true } }
`,
}

/** Project `pay` (no rate limit) and project `slow` (3 requests a minute, one open async flow). */
async function makeProjects(): Promise<{ pay: string; slow: string }> {
  const pay = await makeTempDir('flowctl-callers-')
  await mkdir(join(pay, 'flows'))
  await writeFile(join(pay, 'flowctl.yaml'), 'projectId: pay\nname: Pay\nlimits: { runsPerMinutePerIp: 0 }\n')
  for (const [slug, text] of Object.entries(FLOWS)) await writeFile(join(pay, 'flows', `${slug}.yaml`), text)
  const slow = await makeTempDir('flowctl-callers-slow-')
  await mkdir(join(slow, 'flows'))
  await writeFile(join(slow, 'flowctl.yaml'), 'projectId: slow\nname: Slow\nlimits: { runsPerMinutePerIp: 3 }\n')
  await writeFile(
    join(slow, 'flows', 'job.yaml'),
    `name: Job
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, auth: { type: bearer, token: ${PAY_TOKEN} }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  )
  return { pay, slow }
}

interface Answer {
  status: number
  body: Record<string, unknown>
  headers: Headers
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init)
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: response.headers }
}

function post(url: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  return call(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

async function runsOf(serve: StartedServe, projectId: string, flow: string): Promise<Record<string, unknown>[]> {
  const answer = await call(`${serve.base}/api/runs/${projectId}?flow=${flow}&limit=100`)
  expect(answer.status).toBe(200)
  const body = answer.body as unknown as { runs?: Record<string, unknown>[] } | Record<string, unknown>[]
  return Array.isArray(body) ? body : (body.runs ?? [])
}

/** Polls the result route until the run finished. */
async function finished(serve: StartedServe, runId: string, token: string): Promise<Answer> {
  for (let i = 0; i < 200; i++) {
    const answer = await call(`${serve.base}/api/result/pay/${runId}`, { headers: bearer(token) })
    if (answer.status !== 200 || answer.body.status === 'success' || answer.body.status === 'error') return answer
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`run ${runId} did not finish`)
}

describe('run ids (SPEC §19)', () => {
  it('are unique over 100,000, and carry 100 random bits that owe nothing to the time part', () => {
    const ids = Array.from({ length: 100_000 }, () => newRunId(1_700_000_000_000))
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.filter((id) => !/^[0-9a-z]{12}[0-9a-v]{20}$/.test(id))).toEqual([])
    // All made "in one millisecond": one time part, and still no two random parts alike.
    const randomParts = ids.map((id) => id.slice(RUN_ID_PREFIX_CHARS))
    expect(new Set(ids.map((id) => id.slice(0, 9))).size).toBe(1)
    expect(new Set(randomParts).size).toBe(ids.length)
    // Every one of the 100 bits is set in half the ids (±1%, over 6 standard deviations), and no
    // bit follows the counter: bit 0 of the random part agrees with bit 0 of the counter about half the time.
    const ones = Array.from({ length: RUN_ID_RANDOM_CHARS * 5 }, () => 0)
    let agreesWithCounter = 0
    ids.forEach((id, n) => {
      const random = randomParts[n]!
      for (let c = 0; c < RUN_ID_RANDOM_CHARS; c++) {
        const value = RANDOM_ALPHABET.indexOf(random[c]!)
        for (let b = 0; b < 5; b++) ones[c * 5 + b]! += (value >> b) & 1
      }
      if ((RANDOM_ALPHABET.indexOf(random[0]!) & 1) === (n & 1)) agreesWithCounter++
    })
    for (const count of ones) expect(Math.abs(count / ids.length - 0.5)).toBeLessThan(0.01)
    expect(Math.abs(agreesWithCounter / ids.length - 0.5)).toBeLessThan(0.01)
  })

  it('sort by creation time, across milliseconds and within one', () => {
    const ids = [newRunId(1_000), newRunId(1_000), newRunId(1_001), newRunId(2_000_000_000_000)]
    expect([...ids].sort()).toEqual(ids)
  })
})

/** Tenant A's key and body sent again by tenant B: B's request runs, and A keeps its own answer. */
function describeIdempotencyPerCaller(setup: () => StartedServe): void {
  it('runs the same key and body again for another caller (X-Tenant), and replays each caller its own answer', async () => {
    const serve = setup()
    const url = `${serve.base}/api/run/pay/charge`
    const key = { 'idempotency-key': 'invoice-42' }
    const a = await post(url, { amount: 500 }, { ...bearer(PAY_TOKEN), ...key, 'x-tenant': 'tenant-a' })
    expect(a.status).toBe(201)
    expect(a.body).toMatchObject({ tenant: 'tenant-a', amount: 500 })
    const b = await post(url, { amount: 500 }, { ...bearer(PAY_TOKEN), ...key, 'x-tenant': 'tenant-b' })
    expect(b.status).toBe(201)
    expect(b.headers.get('idempotent-replayed')).toBeNull()
    expect(b.body).toMatchObject({ tenant: 'tenant-b', amount: 500 })
    expect(b.body.run).not.toBe(a.body.run)
    // Each caller's repeat replays its own answer.
    const againA = await post(url, { amount: 500 }, { ...bearer(PAY_TOKEN), ...key, 'x-tenant': 'tenant-a' })
    expect(againA.headers.get('idempotent-replayed')).toBe('true')
    expect(againA.body).toEqual(a.body)
    const againB = await post(url, { amount: 500 }, { ...bearer(PAY_TOKEN), ...key, 'x-tenant': 'tenant-b' })
    expect(againB.headers.get('idempotent-replayed')).toBe('true')
    expect(againB.body).toEqual(b.body)
    // The same caller with another body is still a 422.
    const changed = await post(url, { amount: 501 }, { ...bearer(PAY_TOKEN), ...key, 'x-tenant': 'tenant-b' })
    expect(changed.status).toBe(422)
    // Both payments ran, once each.
    const runs = await runsOf(serve, 'pay', 'charge')
    expect(runs.map((run) => run.id).sort()).toEqual([a.body.run, b.body.run].sort())
  })

  it('never hands another caller the 202 (and so the run id) of an async run queued with the same key', async () => {
    const serve = setup()
    const url = `${serve.base}/api/run/pay/charge-later`
    const key = { 'idempotency-key': 'later-7' }
    const a = await post(url, { amount: 70 }, { ...bearer(PAY_TOKEN), ...key, 'x-tenant': 'tenant-a' })
    expect(a.status).toBe(202)
    const b = await post(url, { amount: 70 }, { ...bearer(PAY_TOKEN), ...key, 'x-tenant': 'tenant-b' })
    expect(b.status).toBe(202)
    expect(b.headers.get('idempotent-replayed')).toBeNull()
    expect(b.body.runId).not.toBe(a.body.runId)
    expect((await finished(serve, String(b.body.runId), PAY_TOKEN)).body.response).toEqual({ status: 201, body: { tenant: 'tenant-b', amount: 70 } })
    const againA = await post(url, { amount: 70 }, { ...bearer(PAY_TOKEN), ...key, 'x-tenant': 'tenant-a' })
    expect(againA.headers.get('idempotent-replayed')).toBe('true')
    expect(againA.body.runId).toBe(a.body.runId)
  })
}

describe('idempotency per caller on the embedded store (SPEC §19)', () => {
  let serve: StartedServe
  beforeAll(async () => {
    const { pay } = await makeProjects()
    serve = await startServe([pay, '--quiet', '--no-watch'])
  }, 60_000)
  afterAll(async () => {
    serve?.child.kill('SIGKILL')
    await serve?.child.catch(() => undefined)
  })
  describeIdempotencyPerCaller(() => serve)
})

describe.skipIf(!PG_URL)('idempotency per caller on PostgreSQL (SPEC §19)', () => {
  let serve: StartedServe
  let drop: (() => Promise<void>) | undefined
  beforeAll(async () => {
    const { pay } = await makeProjects()
    const db = await createTestDatabase()
    drop = db.drop
    serve = await startServe([pay, '--quiet', '--no-watch'], { env: { FLOWCTL_DATABASE_URL: db.url } })
  }, 60_000)
  afterAll(async () => {
    serve?.child.kill('SIGKILL')
    await serve?.child.catch(() => undefined)
    await drop?.()
  })
  describeIdempotencyPerCaller(() => serve)
})

describe('/api/result (SPEC §19, §20)', () => {
  let serve: StartedServe
  let payRun = ''
  let refundRun = ''
  beforeAll(async () => {
    const { pay, slow } = await makeProjects()
    serve = await startServe([pay, slow, '--quiet', '--no-watch'])
    payRun = String((await post(`${serve.base}/api/run/pay/charge-later`, { amount: 1 }, { ...bearer(PAY_TOKEN), 'x-tenant': 't' })).body.runId)
    refundRun = String((await post(`${serve.base}/api/run/pay/refund-later`, {}, bearer(REFUND_TOKEN))).body.runId)
    expect(payRun).toMatch(/^[0-9a-z]{32}$/)
  }, 60_000)
  afterAll(async () => {
    serve?.child.kill('SIGKILL')
    await serve?.child.catch(() => undefined)
  })

  const result = (runId: string, headers: Record<string, string> = {}) => call(`${serve.base}/api/result/pay/${runId}`, { headers })
  /** Everything a caller can tell two answers apart by. */
  const visible = (answer: Answer) => ({ status: answer.status, body: answer.body, challenge: answer.headers.get('www-authenticate') })

  it('answers an unknown id and a real one the same 401 when the credential is missing or wrong', async () => {
    const unknown = newRunId()
    const refusals = [
      await result(unknown),
      await result(payRun),
      await result(refundRun),
      await result(unknown, bearer('wrong')),
      await result(payRun, bearer('wrong')),
      // A credential of another flow of the project: its runs only.
      await result(refundRun, bearer(PAY_TOKEN)),
      await result(payRun, bearer(REFUND_TOKEN)),
    ]
    for (const answer of refusals) expect(visible(answer)).toEqual(visible(refusals[0]!))
    expect(refusals[0]!.status).toBe(401)
    expect(refusals[0]!.body).toEqual({ ok: false, errors: ['invalid token'] })
    // A caller holding one flow's token cannot tell an unknown id from another flow's run either.
    expect(visible(await result(unknown, bearer(PAY_TOKEN)))).toEqual(visible(refusals[0]!))
  })

  it("answers the run's own credential with the result, with the Start's CORS", async () => {
    const answer = await call(`${serve.base}/api/result/pay/${payRun}`, { headers: { ...bearer(PAY_TOKEN), origin: ORIGIN } })
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ runId: payRun })
    expect(answer.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect((await result(refundRun, bearer(REFUND_TOKEN))).status).toBe(200)
    // Refusals carry CORS too, so a browser can read the 401.
    const refused = await call(`${serve.base}/api/result/pay/${payRun}`, { headers: { origin: ORIGIN } })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('access-control-allow-origin')).toBe(ORIGIN)
  })

  it('answers a CORS preflight for an allowed origin, allowing the credential header', async () => {
    const response = await fetch(`${serve.base}/api/result/pay/${payRun}`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(response.headers.get('access-control-allow-methods')).toContain('GET')
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization')
    const other = await fetch(`${serve.base}/api/result/pay/${payRun}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('is rate-limited like the Run API (429 with Retry-After), and stays responsive under a flood of guesses', async () => {
    await awayFromMinuteEnd()
    const guess = () => call(`${serve.base}/api/result/slow/${newRunId()}`)
    const attack = await underAttack(serve, async () => {
      const answers: Answer[] = []
      for (let i = 0; i < 200; i++) answers.push(await guess())
      return answers
    })
    const statuses = attack.result.map((answer) => answer.status)
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401])
    expect(new Set(statuses.slice(3))).toEqual(new Set([429]))
    expect(Number(attack.result[3]!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(attack.result[3]!.body).toEqual({ ok: false, errors: ['rate limit exceeded'] })
    expect(attack.worstProbeMs).toBeLessThan(MAX_PROBE_MS)
    expect(attack.peakRss - attack.idleRss).toBeLessThan(MAX_RSS_GROWTH)
    // One budget with the Run API: the flooded client cannot queue runs either.
    expect((await post(`${serve.base}/api/run/slow/job`, {}, bearer(PAY_TOKEN))).status).toBe(429)
  })
})

describe('the tick secret (SPEC §19)', () => {
  const SECRET = 'cron-secret-abcdef-123456'
  let serve: StartedServe
  beforeAll(async () => {
    const { pay } = await makeProjects()
    serve = await startServe([pay, '--quiet', '--no-watch', '--trust-proxy'], { env: { CRON_SECRET: SECRET } })
  }, 60_000)
  afterAll(async () => {
    serve?.child.kill('SIGKILL')
    await serve?.child.catch(() => undefined)
  })

  const tick = async (secret: string, from?: string) =>
    (await fetch(`${serve.base}/api/cron/tick`, { method: 'POST', headers: { 'x-cron-secret': secret, ...(from ? { 'x-forwarded-for': from } : {}) } })).status

  it('limits failed secrets per client address; the right secret from elsewhere is never refused', async () => {
    const guesses: number[] = []
    for (let i = 0; i < 30; i++) guesses.push(await tick(`guess-${i}`, '203.0.113.5'))
    expect(guesses.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => 401))
    expect(new Set(guesses.slice(10))).toEqual(new Set([429]))
    // Other addresses, the loopback crontab among them, are not affected by the guesser.
    expect(await tick(SECRET, '198.51.100.7')).toBe(200)
    expect(await tick(SECRET)).toBe(200)
    expect(await tick(SECRET, '2001:db8:1:2::7')).toBe(200)
    // The guessing address itself waits out its window, right secret or not (else a guesser would
    // learn the secret from a 200 however throttled it was): see the README's Choices.
    expect(await tick(SECRET, '203.0.113.5')).toBe(429)
  })
})
