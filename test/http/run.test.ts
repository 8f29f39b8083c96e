// SPEC §5.1, row by row, against the real app (app.fetch), real loader and real SQLite store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from '../helpers.js'
import { EXTRA_FLOWS, TEST_ENV } from './flows.js'
import { jsonPost, ORDERS_TOKEN, startTestServer, type TestServer } from './setup.js'

const bearer = { authorization: `Bearer ${ORDERS_TOKEN}` }

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ flows: EXTRA_FLOWS, env: TEST_ENV })
})

afterAll(async () => {
  await server.close()
  await cleanupTempDirs()
})

async function statusRejected(): Promise<Record<string, number>> {
  const view = (await (await server.request('/api/status')).json()) as { projects: { rejected: Record<string, number> }[] }
  return view.projects[0]!.rejected
}

describe('Run API (SPEC §5.1)', () => {
  it('success: the End status and body as JSON, with X-Run-Id, recorded in history', async () => {
    const response = await server.request('/api/run/shop/create-order', jsonPost({ sku: 'A-1', qty: 3 }, bearer))
    expect(response.status).toBe(201)
    expect(response.headers.get('content-type')).toContain('application/json')
    const runId = response.headers.get('x-run-id')
    expect(runId).toMatch(/^[0-9a-z]+$/)
    expect(await response.json()).toEqual({ id: expect.any(String), ok: true })
    const store = (await server.workspace.storeFor('shop'))!
    expect(await store.history.getRun('shop', runId!)).toMatchObject({ trigger: 'http', method: 'POST', httpStatus: 201, status: 'success' })
  })

  it('success: path segments, repeated query values, declared headers and End headers', async () => {
    const response = await server.request('/api/run/shop/echo/one/t%C3%BCr%2Fzwei?tag=a&tag=b', {
      method: 'PUT',
      body: JSON.stringify({ name: 'Ada' }),
      headers: { 'content-type': 'application/json', 'x-tenant': 'acme' },
    })
    expect(response.status).toBe(202)
    expect(response.headers.get('x-flow')).toBe('echo')
    expect(response.headers.get('x-run-id')).toBeTruthy()
    const body = await response.json()
    // An encoded slash stays inside its segment's value.
    expect(body).toEqual({ first: 'one', second: 'tür/zwei', tag: ['a', 'b'], tenant: 'acme', name: 'Ada' })
  })

  it('no End reached: 204 with no body', async () => {
    const response = await server.request('/api/run/shop/no-end', jsonPost({ reason: 'test' }))
    expect(response.status).toBe(204)
    expect(response.headers.get('x-run-id')).toBeTruthy()
    expect(await response.text()).toBe('')
  })

  it.each([
    ['unknown project', '/api/run/nope/create-order'],
    ['unknown flow', '/api/run/shop/nope'],
    ['too few path segments', '/api/run/shop/order-status'],
    ['too many path segments', '/api/run/shop/order-status/open/extra'],
    ['segments for a flow without path inputs', '/api/run/shop/quote/extra'],
    ['empty segment', '/api/run/shop//quote'],
    ['trailing slash', '/api/run/shop/quote/'],
    ['only a project', '/api/run/shop'],
    ['nothing after /api/run', '/api/run'],
    ['encoded dot segments', '/api/run/shop/order-status/%2e%2e'],
    ['encoded dot segments in the slug', '/api/run/shop/%2E%2E/quote'],
    ['encoded slash in the slug', '/api/run/shop/create%2Forder'],
  ])('404 for %s', async (_, path) => {
    const response = await server.request(path, jsonPost({}))
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ ok: false, errors: ['flow not found'] })
  })

  it('dot segments that climb out of /api/run reach no run and no other handler', async () => {
    // The URL parser resolves `%2e%2e` like `..` before routing (as browsers do): the request
    // becomes POST /api/status, a GET-only route: 405 (SPEC §20), no run.
    const response = await server.request('/api/run/shop/%2e%2e/%2e%2e/status', jsonPost({}))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD')
    expect(response.headers.get('x-run-id')).toBeNull()
    expect(await response.json()).toEqual({ ok: false, errors: ['method not allowed'] })
  })

  it("405 with Allow for a method other than the Start's", async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'PROPFIND', 'FOO']) {
      const response = await server.request('/api/run/shop/create-order', { method })
      expect(response.status, method).toBe(405)
      expect(response.headers.get('allow')).toBe('POST, OPTIONS')
      if (method !== 'HEAD') expect(await response.json()).toEqual({ ok: false, errors: ['method not allowed'] })
    }
    const options = await server.request('/api/run/shop/create-order', { method: 'OPTIONS' })
    expect(options.status).toBe(204)
    expect(options.headers.get('allow')).toBe('POST, OPTIONS')
  })

  it('401 for a missing or wrong credential, with WWW-Authenticate, before validation', async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'missing credential'],
      [{ authorization: 'Bearer wrong' }, 'invalid token'],
      // A Basic credential where a Bearer one is expected: no bearer credential was sent.
      [{ authorization: `Basic ${ORDERS_TOKEN}` }, 'missing credential'],
    ]
    for (const [headers, reason] of cases) {
      // An invalid body too: the credential is checked first.
      const response = await server.request('/api/run/shop/create-order', jsonPost({ qty: -1 }, headers))
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="flowctl"')
      expect(await response.json()).toEqual({ ok: false, errors: [reason] })
    }
  })

  it.each([
    ['basic right', '/api/run/shop/basic', { authorization: `Basic ${Buffer.from('alice:wonderland').toString('base64')}` }, 200],
    ['basic wrong', '/api/run/shop/basic', { authorization: `Basic ${Buffer.from('alice:nope').toString('base64')}` }, 401, 'invalid token'],
    ['basic missing', '/api/run/shop/basic', {}, 401, 'missing credential'],
    ['apiKey right', '/api/run/shop/keyed', { 'x-api-key': 'key-0123456789' }, 200],
    ['apiKey wrong', '/api/run/shop/keyed', { 'x-api-key': 'key-01234567890' }, 401, 'invalid token'],
    ['apiKey missing', '/api/run/shop/keyed', {}, 401, 'missing credential'],
    ['apiKey custom header', '/api/run/shop/custom-key', { 'x-shop-key': 'key-0123456789' }, 200],
    ['apiKey custom header, default header sent', '/api/run/shop/custom-key', { 'x-api-key': 'key-0123456789' }, 401, 'missing credential'],
    ['unresolved secret', '/api/run/shop/unresolved', { authorization: 'Bearer ' }, 401, 'missing credential'],
    ['unresolved secret, literal', '/api/run/shop/unresolved', { authorization: 'Bearer ${secrets.NOT_SET_ANYWHERE}' }, 401, 'invalid token'],
    ['empty expected token', '/api/run/shop/empty-token', { authorization: 'Bearer ' }, 401, 'missing credential'],
    ['empty expected token, any value', '/api/run/shop/empty-token', { authorization: 'Bearer x' }, 401, 'invalid token'],
  ] as [string, string, Record<string, string>, number, string?][])('auth: %s', async (_, path, headers, status, reason) => {
    const response = await server.request(path, { headers })
    expect(response.status).toBe(status)
    if (status === 401) {
      expect(await response.json()).toEqual({ ok: false, errors: [reason] })
      expect(response.headers.get('www-authenticate')).toMatch(/^(Bearer|Basic|ApiKey) /)
    }
  })

  it('names the right scheme in WWW-Authenticate', async () => {
    expect((await server.request('/api/run/shop/basic')).headers.get('www-authenticate')).toBe('Basic realm="flowctl"')
    expect((await server.request('/api/run/shop/keyed')).headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"')
    expect((await server.request('/api/run/shop/custom-key')).headers.get('www-authenticate')).toBe('ApiKey header="X-Shop-Key"')
  })

  it('413 for a body over bodyLimitBytes', async () => {
    const response = await server.request('/api/run/shop/quote', jsonPost({ items: [{ sku: 'x'.repeat(1_100_000), price: 1 }] }))
    expect(response.status).toBe(413)
    expect(await response.json()).toEqual({ ok: false, errors: ['body exceeds 1048576 bytes'] })
  })

  it('415 for a body type the Start does not accept (SPEC §11); 400 for bad JSON or inputs failing their schema, one error per problem', async () => {
    const notJson = await server.request('/api/run/shop/quote', {
      method: 'POST',
      body: 'items=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(notJson.status).toBe(415)
    expect(await notJson.json()).toEqual({ ok: false, errors: ['unsupported content type application/x-www-form-urlencoded'] })

    const malformed = await server.request('/api/run/shop/quote', jsonPost('{"items": [}'))
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toEqual({ ok: false, errors: ['body: is not valid JSON'] })

    const invalid = await server.request('/api/run/shop/create-order', jsonPost({ sku: '', qty: 0 }, bearer))
    expect(invalid.status).toBe(400)
    const body = (await invalid.json()) as { ok: boolean; errors: string[] }
    expect(body.ok).toBe(false)
    expect(body.errors).toContain('body/qty: must be >= 1')
    expect(body.errors.length).toBeGreaterThanOrEqual(2)
  })

  it('500 when a node fails: node id and run id, and the failure is recorded', async () => {
    const response = await server.request('/api/run/shop/fetch-status', jsonPost({ url: 'http://127.0.0.1:1/' }, bearer))
    expect(response.status).toBe(500)
    const body = (await response.json()) as { runId: string }
    expect(body).toEqual({ ok: false, errors: ['node call failed'], nodeId: 'call', runId: expect.any(String) })
    const store = (await server.workspace.storeFor('shop'))!
    expect(await store.history.getRun('shop', body.runId)).toMatchObject({ status: 'error', failedNodeId: 'call' })
  })

  it('counts every rejected request by status on /status', async () => {
    const before = await statusRejected()
    await server.request('/api/run/shop/nope')
    await server.request('/api/run/shop/create-order', { method: 'GET' })
    await server.request('/api/run/shop/create-order', jsonPost({}))
    const after = await statusRejected()
    expect(after['404']).toBe((before['404'] ?? 0) + 1)
    expect(after['405']).toBe((before['405'] ?? 0) + 1)
    expect(after['401']).toBe((before['401'] ?? 0) + 1)
  })
})

describe('?_trace=1', () => {
  it('wraps the response and adds the steps, with secrets masked', async () => {
    const response = await server.request('/api/run/shop/masked?_trace=1')
    expect(response.status).toBe(200)
    const text = await response.text()
    expect(text).not.toContain('super-secret-value')
    const body = JSON.parse(text)
    expect(body.response).toEqual({ status: 200, body: { ok: true } })
    expect(body.trace).toMatchObject({ runId: response.headers.get('x-run-id'), durationMs: expect.any(Number) })
    expect(body.trace.steps.map((s: { nodeId: string }) => s.nodeId)).toEqual(['start', 'keep', 'done'])
    expect(body.trace.steps[1]).toMatchObject({ type: 'set', name: 'Keep', port: 'out', output: { secret: '***', note: 'value *** here' } })
  })

  it('keeps the failure status and shape', async () => {
    const response = await server.request('/api/run/shop/fetch-status?_trace=1', jsonPost({ url: 'http://127.0.0.1:1/' }, bearer))
    expect(response.status).toBe(500)
    const body = await response.json()
    expect(body).toMatchObject({ ok: false, errors: ['node call failed'], nodeId: 'call', runId: expect.any(String) })
    expect(body.trace.steps.at(-1).nodeId).toBe('call')
  })

  it('does not pass _trace to the flow as a query input', async () => {
    const response = await server.request('/api/run/shop/order-status/open?_trace=1&verbose=true')
    expect(response.status).toBe(200)
    expect((await response.json()).response.body).toEqual({ state: 'open', message: 'Order is open', verbose: true })
  })
})
