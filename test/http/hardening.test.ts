// Rate limit, bad input of every kind, bursts, store outages and run timeouts: never a 500 from
// bad input, and the app answers normally afterwards.
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from '../helpers.js'
import { jsonPost, ORDERS_TOKEN, startTestServer, type TestServer } from './setup.js'

const bearer = { authorization: `Bearer ${ORDERS_TOKEN}` }

afterAll(cleanupTempDirs)

describe('rate limit', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ settings: [['runsPerMinutePerIp: 600', 'runsPerMinutePerIp: 3']], app: { trustProxy: true } })
  })
  afterAll(() => server.close())

  it('answers 429 with Retry-After once an IP passes the limit, before auth', async () => {
    // The trusted proxy (one hop) appends the address it saw; what the client wrote is left of it.
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': `10.9.9.9, ${ip}` } })
    // Counted before auth: rejected credentials use up the window too.
    for (let i = 0; i < 3; i++) expect((await server.request('/api/run/shop/create-order', { method: 'POST', ...from('203.0.113.7') })).status).toBe(401)
    const before = Date.now()
    const limited = await server.request('/api/run/shop/create-order', { method: 'POST', ...from('203.0.113.7') })
    const after = Date.now()
    expect(limited.status).toBe(429)
    expect(await limited.json()).toEqual({ ok: false, errors: ['rate limit exceeded'] })
    const retryAfter = Number(limited.headers.get('retry-after'))
    const lowest = Math.max(1, Math.ceil((60_000 - (after % 60_000)) / 1000))
    const highest = Math.max(1, Math.ceil((60_000 - (before % 60_000)) / 1000))
    // Unless the minute turned during the request, the value is exactly the seconds left.
    if (Math.floor(before / 60_000) === Math.floor(after / 60_000)) {
      expect(retryAfter).toBeGreaterThanOrEqual(lowest)
      expect(retryAfter).toBeLessThanOrEqual(highest)
    }
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    // Another client is not affected; 404s are not counted against the limit.
    expect((await server.request('/api/run/shop/order-status/open', from('198.51.100.1'))).status).toBe(200)
  })

  it('ignores X-Forwarded-For without trust-proxy', async () => {
    const plain = await startTestServer({ settings: [['runsPerMinutePerIp: 600', 'runsPerMinutePerIp: 2']] })
    try {
      const statuses: number[] = []
      for (let i = 0; i < 3; i++) {
        const response = await plain.request('/api/run/shop/order-status/open', { headers: { 'x-forwarded-for': `192.0.2.${i}` } })
        statuses.push(response.status)
      }
      expect(statuses).toEqual([200, 200, 429])
    } finally {
      await plain.close()
    }
  })
})

describe('bad input never answers 500', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ settings: [['runsPerMinutePerIp: 600', 'runsPerMinutePerIp: 0']] })
  })
  afterAll(() => server.close())

  const cases: [string, string, RequestInit, number][] = [
    ['malformed JSON', '/api/run/shop/quote', jsonPost('{"items":'), 400],
    ['JSON array where an object is expected', '/api/run/shop/quote', jsonPost([1, 2]), 400],
    ['JSON scalar where an object is expected', '/api/run/shop/quote', jsonPost('42'), 400],
    ['JSON null', '/api/run/shop/quote', jsonPost('null'), 400],
    // A JSON-only Start answers 415 for other body types (SPEC §11).
    ['text/plain body', '/api/run/shop/quote', { method: 'POST', body: '{"items":[]}', headers: { 'content-type': 'text/plain' } }, 415],
    ['no content type', '/api/run/shop/quote', { method: 'POST', body: new Blob(['{"items":[]}']) }, 415],
    ['form body', '/api/run/shop/quote', { method: 'POST', body: new URLSearchParams({ items: 'x' }) }, 415],
    ['body over the limit', '/api/run/shop/quote', jsonPost('"' + 'x'.repeat(1_048_577) + '"'), 413],
    ['100k nested arrays', '/api/run/shop/quote', jsonPost('['.repeat(100_000) + ']'.repeat(100_000)), 400],
    ['100k nested objects', '/api/run/shop/quote', jsonPost('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)), 400],
    ['deep nesting inside a valid field', '/api/run/shop/quote', jsonPost(`{"items":[{"sku":"a","price":1,"x":${'['.repeat(5000)}${']'.repeat(5000)}}]}`), 400],
    [
      'invalid UTF-8',
      '/api/run/shop/quote',
      { method: 'POST', body: new Uint8Array([0x7b, 0xc3, 0x28, 0x7d]), headers: { 'content-type': 'application/json' } },
      400,
    ],
    ['empty body where one is required', '/api/run/shop/quote', { method: 'POST', headers: { 'content-type': 'application/json' } }, 400],
    ['huge header', '/api/run/shop/order-status/open', { headers: { 'x-filler': 'a'.repeat(64 * 1024) } }, 200],
    ['huge bearer token', '/api/run/shop/create-order', jsonPost({ sku: 'a', qty: 1 }, { authorization: 'Bearer ' + 'a'.repeat(64 * 1024) }), 401],
    ['garbage authorization', '/api/run/shop/create-order', jsonPost({ sku: 'a', qty: 1 }, { authorization: '\u00ff\u00fe' }), 401],
    ['unknown method', '/api/run/shop/quote', { method: 'BREW' }, 405],
    ['TRACE', '/api/run/shop/quote', { method: 'PATCH' }, 405],
    ['bad percent escape', '/api/run/shop/order-status/%E0%A4%A', {}, 400],
    ['query input of the wrong type', '/api/run/shop/order-status/open?verbose=maybe', {}, 400],
  ]

  it.each(cases)('%s', async (_, path, init, status) => {
    const response = await server.request(path, init)
    expect(response.status).toBe(status)
    const text = await response.text()
    if (status !== 200) expect(JSON.parse(text)).toMatchObject({ ok: false, errors: expect.any(Array) })
    expect(text).not.toMatch(/\n\s+at /)
  })

  it.each([
    ['/api/run/shop/order-status/..%2F..%2Fetc%2Fpasswd', '../../etc/passwd'],
    ['/api/run/shop/order-status/%2e%2e%2f', '../'],
    ['/api/run/shop/order-status/%2E%2E', null],
  ])('keeps encoded separators and dots inside one path value: %s', async (path, state) => {
    const response = await server.request(path)
    expect(response.status).toBe(404)
    const body = await response.json()
    // The flow itself answers (its "unknown state" End) with the decoded value, or the route is not found.
    if (state === null) expect(body).toEqual({ ok: false, errors: ['flow not found'] })
    else expect(body).toEqual({ state, message: `No such state: ${state}` })
  })

  it('drops __proto__ and constructor keys: Object.prototype is untouched', async () => {
    const body = '{"items":[{"sku":"a","price":1,"__proto__":{"polluted":true}}],"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'
    const response = await server.request('/api/run/shop/quote', jsonPost(body))
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ firstSku: 'a', firstPrice: 1 })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.prototype).not.toHaveProperty('polluted')
    const query = await server.request('/api/run/shop/order-status/open?__proto__=x&constructor=y')
    expect(query.status).toBe(200)
    expect(Object.prototype).not.toHaveProperty('x')
  })

  it('survives a burst of 1,000 mixed requests and answers normally afterwards', async () => {
    const inits: [string, RequestInit][] = [
      ['/api/run/shop/quote', jsonPost({ items: [{ sku: 'a', price: 1 }] })],
      ['/api/run/shop/quote', jsonPost('{oops')],
      ['/api/run/shop/create-order', jsonPost({ sku: 'a', qty: 1 })],
      ['/api/run/shop/order-status/open', {}],
      ['/api/run/nope/x', {}],
      ['/api/run/shop/quote', { method: 'DELETE' }],
    ]
    const statuses = new Map<number, number>()
    for (let batch = 0; batch < 10; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const [path, init] = inits[(batch * 100 + i) % inits.length]!
          return server.request(path, init)
        }),
      )
      for (const response of responses) {
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
        await response.arrayBuffer()
      }
    }
    expect(statuses.has(500)).toBe(false)
    expect([...statuses.keys()].sort()).toEqual([200, 400, 401, 404, 405])
    const after = await server.request('/api/run/shop/create-order', jsonPost({ sku: 'after', qty: 2 }, { authorization: `Bearer ${ORDERS_TOKEN}` }))
    expect(after.status).toBe(201)
  })
})

describe('store outages and timeouts', () => {
  it('answers 503 when the store cannot be opened, and says so on /status without the password', async () => {
    const server = await startTestServer({ settings: [['database: embedded', 'database: "postgres://flow:hunter2-secret@127.0.0.1:1/flow"']] })
    try {
      const entry = server.workspace.get('shop')!
      expect(entry.store).toBeNull()
      const run = await server.request('/api/run/shop/order-status/open')
      expect(run.status).toBe(503)
      expect(await run.json()).toEqual({ ok: false, errors: ['store unavailable'] })
      // Auth is still checked first.
      expect((await server.request('/api/run/shop/create-order', jsonPost({}))).status).toBe(401)
      const status = await server.request('/api/status')
      const text = await status.text()
      expect(text).not.toContain('hunter2-secret')
      const view = JSON.parse(text)
      expect(view.ok).toBe(false)
      expect(view.projects[0].store).toMatchObject({ ok: false, error: expect.any(String) })
      expect(view.projects[0].rejected['503']).toBeGreaterThanOrEqual(1)
    } finally {
      await server.close()
    }
  })

  it('answers 503 when recording the run fails', async () => {
    const server = await startTestServer()
    try {
      await server.workspace.get('shop')!.store!.close()
      const response = await server.request('/api/run/shop/order-status/open')
      expect(response.status).toBe(503)
      expect(await response.json()).toEqual({ ok: false, errors: ['store unavailable'] })
    } finally {
      await server.close()
    }
  })

  it('answers 500 with the node id when the run times out', async () => {
    const hanging: Server = createServer(() => {
      /* never answers */
    })
    await new Promise<void>((ready) => hanging.listen(0, '127.0.0.1', () => ready()))
    const port = (hanging.address() as { port: number }).port
    const server = await startTestServer({ settings: [['runTimeoutMs: 30000', 'runTimeoutMs: 200']] })
    try {
      const response = await server.request('/api/run/shop/fetch-status', jsonPost({ url: `http://127.0.0.1:${port}/` }, bearer))
      expect(response.status).toBe(500)
      const body = (await response.json()) as { runId: string }
      expect(body).toEqual({ ok: false, errors: ['node call failed'], nodeId: 'call', runId: expect.any(String) })
      const record = await (await server.workspace.storeFor('shop'))!.history.getRun('shop', body.runId)
      expect(record).toMatchObject({ status: 'error', error: 'timeout' })
    } finally {
      hanging.closeAllConnections()
      hanging.close()
      await server.close()
    }
  })
})
