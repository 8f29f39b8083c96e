// The one onError (src/http/app.ts): every error answer of the server is a thrown FlowctlError
// rendered from the catalog, `{ ok: false, errors }` with the error's own headers, counted on
// /status where the route counts refusals; anything unexpected is a 500 without internals, logged once.
import { afterEach, describe, expect, it } from 'vitest'
import { FlowctlError } from '../../src/errors.js'
import { awayFromMinuteEnd, cleanupTempDirs } from '../helpers.js'
import { jsonPost, ORDERS_TOKEN, startTestServer, type TestServer } from './setup.js'

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
  await cleanupTempDirs()
})

async function answer(response: Response): Promise<{ status: number; body: unknown; type: string | null }> {
  return { status: response.status, body: await response.json(), type: response.headers.get('content-type') }
}

const JSON_TYPE = 'application/json; charset=utf-8'

describe('onError renders each class of error', () => {
  it('400, 401, 404, 405, 413, 415 of the Run API, with their headers', async () => {
    server = await startTestServer()
    const auth = { authorization: `Bearer ${ORDERS_TOKEN}` }
    expect(await answer(await server.request('/api/run/shop/create-order', jsonPost({ sku: 'A-1', qty: 0 }, auth)))).toMatchObject({
      status: 400,
      body: { ok: false, errors: [expect.stringContaining('qty')] },
      type: JSON_TYPE,
    })
    const unauthorized = await server.request('/api/run/shop/create-order', jsonPost({ sku: 'A-1', qty: 1 }, { authorization: 'Bearer wrong' }))
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer realm="flowctl"')
    expect(await answer(unauthorized)).toEqual({ status: 401, body: { ok: false, errors: ['invalid token'] }, type: JSON_TYPE })
    expect(await answer(await server.request('/api/run/shop/no-such-flow'))).toEqual({
      status: 404,
      body: { ok: false, errors: ['flow not found'] },
      type: JSON_TYPE,
    })
    expect(await answer(await server.request('/no/such/route'))).toEqual({ status: 404, body: { ok: false, errors: ['not found'] }, type: JSON_TYPE })
    const wrongMethod = await server.request('/api/run/shop/create-order', { method: 'GET' })
    expect(wrongMethod.headers.get('allow')).toBe('POST, OPTIONS')
    expect(await answer(wrongMethod)).toEqual({ status: 405, body: { ok: false, errors: ['method not allowed'] }, type: JSON_TYPE })
    const tooLarge = await server.request('/api/run/shop/create-order', jsonPost({ sku: 'x'.repeat(1_100_000), qty: 1 }, auth))
    expect(await answer(tooLarge)).toEqual({ status: 413, body: { ok: false, errors: ['body exceeds 1048576 bytes'] }, type: JSON_TYPE })
    const text = await server.request('/api/run/shop/create-order', { method: 'POST', body: 'hi', headers: { 'content-type': 'text/plain', ...auth } })
    expect(await answer(text)).toEqual({ status: 415, body: { ok: false, errors: ['unsupported content type text/plain'] }, type: JSON_TYPE })
    // The refusals of the Run API are counted per project on /status (404 of an unknown flow included).
    const status = (await (await server.request('/api/status')).json()) as { projects: { rejected: Record<string, number> }[] }
    expect(status.projects[0]!.rejected).toEqual({ '400': 1, '401': 1, '404': 1, '405': 1, '413': 1, '415': 1 })
  })

  it('HEAD gets the status and headers of the GET answer, without the body', async () => {
    server = await startTestServer()
    const head = await server.request('/api/run/shop/order-status', { method: 'HEAD' })
    expect(head.status).toBe(404)
    expect(head.headers.get('content-length')).toBe(String(JSON.stringify({ ok: false, errors: ['flow not found'] }).length))
    expect(await head.text()).toBe('')
  })

  it('429 with Retry-After', async () => {
    server = await startTestServer({ settings: [['runsPerMinutePerIp: 600', 'runsPerMinutePerIp: 1']] })
    await awayFromMinuteEnd()
    expect((await server.request('/api/run/shop/order-status/open')).status).toBe(200)
    const limited = await server.request('/api/run/shop/order-status/open')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(await answer(limited)).toEqual({ status: 429, body: { ok: false, errors: ['rate limit exceeded'] }, type: JSON_TYPE })
  })

  it('401 and 403 of the §14 APIs', async () => {
    server = await startTestServer({ app: { fallbackClientIp: '203.0.113.9' } })
    const anonymous = await server.request('/api/runs/shop')
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="flowctl"')
    expect(await answer(anonymous)).toEqual({ status: 401, body: { ok: false, errors: ['invalid token'] }, type: JSON_TYPE })
    server.workspace.get('shop')
    const local = await startTestServer()
    try {
      const crossSite = await local.request('/api/replay/shop/some-run', { method: 'POST', headers: { origin: 'https://evil.example' } })
      expect(await answer(crossSite)).toEqual({ status: 403, body: { ok: false, errors: ['cross-site request refused'] }, type: JSON_TYPE })
    } finally {
      await local.close()
    }
  })

  it('503 when the store cannot record the run, logged once', async () => {
    server = await startTestServer()
    await server.workspace.get('shop')!.store!.close()
    for (let i = 0; i < 2; i++) {
      expect(await answer(await server.request('/api/run/shop/order-status/open'))).toEqual({
        status: 503,
        body: { ok: false, errors: ['store unavailable'] },
        type: JSON_TYPE,
      })
    }
    expect(server.logs.filter((line) => line.includes('is unavailable'))).toHaveLength(1)
  })

  it("the Replay button on a store outage: a 503 page with the catalog message, never the driver's", async () => {
    server = await startTestServer()
    const store = server.workspace.get('shop')!.store!
    store.history.getRun = () => Promise.reject(new FlowctlError('STORE_UNAVAILABLE', 'connect ECONNREFUSED db.internal.example:5432'))
    const page = await server.request('/runs/shop/some-run/replay', { method: 'POST' })
    const text = await page.text()
    expect(page.status).toBe(503)
    expect(text).toContain('store unavailable')
    expect(text).not.toContain('db.internal')
    const refused = await server.request('/api/replay/shop/some-run', { method: 'POST' })
    expect(await answer(refused)).toEqual({ status: 503, body: { ok: false, errors: ['store unavailable'] }, type: JSON_TYPE })
  })

  it('500 without internals for anything unexpected, logged once', async () => {
    server = await startTestServer()
    server.workspace.get = () => {
      throw new Error('secret-internal-detail at /srv/flowctl')
    }
    const response = await server.request('/api/run/shop/order-status/open')
    const text = await response.text()
    expect(response.status).toBe(500)
    expect(JSON.parse(text)).toEqual({ ok: false, errors: ['internal error'] })
    expect(text).not.toContain('secret-internal')
    expect(server.logs.filter((line) => line.startsWith('error GET /api/run/shop/order-status/open: Error: secret-internal-detail'))).toHaveLength(1)
  })
})
