// SPEC §14 over HTTP against the real app: who may use each new route (loopback, viewer, editor,
// an unknown caller), what replay answers, what /api/events streams, what the serve log says, that
// stored runs never hold a secret, and that the pages escape what flow authors and callers write.
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addUser } from '../../src/users/users-file.js'
import { cleanupTempDirs, makeTempDir } from '../helpers.js'
import { EXTRA_FLOWS, TEST_ENV } from './flows.js'
import { jsonPost, ORDERS_TOKEN, startTestServer, type TestServer } from './setup.js'
import { startLocalServer, type LocalServer } from '../nodes/local-server.js'

const SECRET = 'super-secret-value'

const SECRET_FLOWS: Record<string, string> = {
  ...EXTRA_FLOWS,
  // The caller sends the secret in a body field and a declared header; an upstream answers with it.
  'leaky.yaml': `name: Leaky
nodes:
  - id: start
    type: start
    name: Start
    method: post
    inputs:
      headers: { type: object, properties: { x-key: { type: string } } }
      body: { type: object, properties: { password: { type: string }, url: { type: string } } }
    next: call
  - { id: call, type: http, name: Call, method: get, url: "{{start.url}}", headers: { authorization: "Bearer \${secrets.MASKED}" }, next: keep }
  - { id: keep, type: set, name: Keep, values: { upstream: "{{call.body}}", inline: "key \${secrets.MASKED}" }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
}

let usersFile: string
let viewer: string
let editor: string
let outsider: string
let server: TestServer
let upstream: LocalServer
let runId: string

const remote = (token?: string, extra: Record<string, string> = {}): Record<string, string> => ({
  host: 'remote.example',
  ...(token ? { authorization: `Bearer ${token}` } : {}),
  ...extra,
})

beforeAll(async () => {
  usersFile = join(await makeTempDir('flowctl-users-'), 'users.yaml')
  viewer = (await addUser(usersFile, 'vera', { shop: 'viewer' })).token
  editor = (await addUser(usersFile, 'eddie', { shop: 'editor' })).token
  outsider = (await addUser(usersFile, 'otto', { other: 'owner' })).token
  server = await startTestServer({ flows: SECRET_FLOWS, env: TEST_ENV, app: { usersFile } })
  // Echoes each request, so its answer carries the secret the http node sent in a header.
  upstream = await startLocalServer()
  const created = await server.request('/api/run/shop/create-order', jsonPost({ sku: 'A-1', qty: 2 }, { authorization: `Bearer ${ORDERS_TOKEN}` }))
  runId = created.headers.get('x-run-id')!
})

afterAll(async () => {
  await upstream.close()
  await server.close()
  await cleanupTempDirs()
})

type Caller = 'loopback' | 'viewer' | 'editor' | 'outsider' | 'unknown'
const CALLERS: Caller[] = ['loopback', 'viewer', 'editor', 'outsider', 'unknown']

function headersOf(caller: Caller): Record<string, string> {
  switch (caller) {
    case 'loopback':
      return {}
    case 'viewer':
      return remote(viewer)
    case 'editor':
      return remote(editor)
    case 'outsider':
      return remote(outsider)
    case 'unknown':
      return remote('flowctl_not-a-user')
  }
}

describe('access to every new route (SPEC §14, §17)', () => {
  const reads: [string, string][] = [
    ['GET /flows/shop/create-order', '/flows/shop/create-order'],
    ['GET /runs/shop/<id>', '/runs/shop/RUN'],
    ['GET /api/runs/shop', '/api/runs/shop'],
    ['GET /api/runs/shop/<id>', '/api/runs/shop/RUN'],
  ]
  const expectedRead: Record<Caller, number> = { loopback: 200, viewer: 200, editor: 200, outsider: 403, unknown: 401 }
  for (const [name, path] of reads) {
    it.each(CALLERS)(`${name}: %s`, async (caller) => {
      const response = await server.request(path.replace('RUN', runId), { headers: headersOf(caller) })
      expect(response.status).toBe(expectedRead[caller])
    })
  }

  const expectedRun: Record<Caller, number> = { loopback: 201, viewer: 403, editor: 201, outsider: 403, unknown: 401 }
  it.each(CALLERS)('POST /api/replay/shop/<id>: %s', async (caller) => {
    const response = await server.request(`/api/replay/shop/${runId}`, { method: 'POST', headers: headersOf(caller) })
    expect(response.status).toBe(expectedRun[caller])
  })

  it.each(CALLERS)('POST /flows/shop/create-order (the run form): %s', async (caller) => {
    const response = await server.request('/flows/shop/create-order', {
      method: 'POST',
      headers: { ...headersOf(caller), accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ body: '{"sku":"F-1","qty":1}' }).toString(),
    })
    const expected = caller === 'loopback' || caller === 'editor' ? 200 : expectedRun[caller]
    expect(response.status).toBe(expected)
    if (expected === 200) expect(await response.json()).toMatchObject({ status: 201, runId: expect.any(String), trace: { steps: expect.any(Array) } })
  })

  it.each(CALLERS)('POST /runs/shop/<id>/replay (the Replay button): %s', async (caller) => {
    const response = await server.request(`/runs/shop/${runId}/replay`, { method: 'POST', headers: headersOf(caller) })
    expect(response.status).toBe(caller === 'loopback' || caller === 'editor' ? 303 : expectedRun[caller])
  })

  it.each(CALLERS)('GET /api/events: %s', async (caller) => {
    const response = await server.request('/api/events', { headers: headersOf(caller) })
    // Events are per project: a signed-in user with no role gets a stream that carries nothing of shop.
    expect(response.status).toBe(caller === 'unknown' ? 401 : 200)
    await response.body?.cancel()
  })

  it.each(CALLERS)('GET / (dashboard): %s', async (caller) => {
    const response = await server.request('/', { headers: headersOf(caller) })
    expect(response.status).toBe(200)
    const text = await response.text()
    const sees = caller === 'loopback' || caller === 'viewer' || caller === 'editor'
    expect(text.includes('data-flow-card="create-order"')).toBe(sees)
  })

  it('/docs/shop carries the document on loopback only; /api/openapi still wants a token from everyone', async () => {
    const local = await (await server.request('/docs/shop')).text()
    expect(local).toContain('id="openapi-document"')
    expect(local).toContain('/api/run/shop/create-order')
    const far = await (await server.request('/docs/shop', { headers: remote(viewer) })).text()
    expect(far).not.toContain('id="openapi-document"')
    expect((await server.request('/api/openapi/shop')).status).toBe(401)
  })

  it('refuses a cross-site POST (another site cannot make a local browser run flows)', async () => {
    for (const path of [`/api/replay/shop/${runId}`, `/runs/shop/${runId}/replay`, '/flows/shop/quote']) {
      const response = await server.request(path, {
        method: 'POST',
        headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'body=%7B%7D',
      })
      expect(response.status, path).toBe(403)
    }
    const sameSite = await server.request(`/api/replay/shop/${runId}`, { method: 'POST', headers: { origin: 'http://localhost' } })
    expect(sameSite.status).toBe(201)
  })
})

describe('/sign-in (a cookie for browsers, which cannot send the header on pages)', () => {
  it('sets an HttpOnly SameSite=Strict cookie for a known token that pages and /api/runs accept, not /api/openapi', async () => {
    const refused = await server.request('/sign-in', {
      method: 'POST',
      headers: remote(undefined, { 'content-type': 'application/x-www-form-urlencoded' }),
      body: 'token=flowctl_nope',
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('set-cookie')).toBeNull()
    const signedIn = await server.request('/sign-in', {
      method: 'POST',
      headers: remote(undefined, { 'content-type': 'application/x-www-form-urlencoded' }),
      body: `token=${encodeURIComponent(viewer)}`,
    })
    expect(signedIn.status).toBe(303)
    const cookie = signedIn.headers.get('set-cookie')!
    expect(cookie).toMatch(/^flowctl_token=.+; Path=\/; HttpOnly; SameSite=Strict$/)
    const withCookie = remote(undefined, { cookie: cookie.split(';')[0]! })
    expect((await server.request('/api/runs/shop', { headers: withCookie })).status).toBe(200)
    expect((await server.request('/flows/shop/create-order', { headers: withCookie })).status).toBe(200)
    expect((await server.request(`/api/replay/shop/${runId}`, { method: 'POST', headers: withCookie })).status).toBe(403)
    expect((await server.request('/api/openapi/shop', { headers: withCookie })).status).toBe(401)
    const out = await server.request('/sign-out', { method: 'POST', headers: withCookie })
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
  })
})

describe('POST /api/replay/<projectId>/<runId>', () => {
  it('runs the recorded input again and records replayOf', async () => {
    const response = await server.request(`/api/replay/shop/${runId}`, { method: 'POST' })
    expect(response.status).toBe(201)
    const body = (await response.json()) as {
      runId: string
      replayOf: string
      response: { status: number; body: { ok: boolean } }
      trace: { steps: unknown[] }
    }
    expect(body).toMatchObject({ replayOf: runId, response: { status: 201, body: { ok: true } } })
    expect(body.trace.steps).toHaveLength(4)
    const record = (await (await server.request(`/api/runs/shop/${body.runId}`)).json()) as { replayOf: string; input: unknown }
    expect(record.replayOf).toBe(runId)
    expect(record.input).toEqual({ body: { sku: 'A-1', qty: 2 }, path: {}, query: {}, headers: { 'x-tenant': 'default' } })
  })

  it('404 for an unknown run or project; 409 for a run that kept no input', async () => {
    expect(await (await server.request('/api/replay/shop/nope', { method: 'POST' })).json()).toEqual({
      ok: false,
      errors: ['no run with id "nope" in project shop'],
    })
    expect((await server.request('/api/replay/nope/x', { method: 'POST' })).status).toBe(404)
    const keepNone = await startTestServer({ settings: [['limits:', 'history: { keep: none }\nlimits:']], app: { usersFile } })
    try {
      const run = await keepNone.request('/api/run/shop/quote', jsonPost({ items: [{ sku: 'X', price: 2 }] }))
      expect(run.status).toBe(200)
      const replay = await keepNone.request(`/api/replay/shop/${run.headers.get('x-run-id')}`, { method: 'POST' })
      expect(replay.status).toBe(409)
      expect(((await replay.json()) as { errors: string[] }).errors[0]).toContain('kept no input')
    } finally {
      await keepNone.close()
    }
  })
})

describe('GET /api/events', () => {
  it('streams a run event (the record without trace) as a run ends, only to callers who may read its project', async () => {
    const local = await server.request('/api/events')
    const outsiderStream = await server.request('/api/events', { headers: remote(outsider) })
    const reader = local.body!.getReader()
    const otherReader = outsiderStream.body!.getReader()
    const made = await server.request('/api/run/shop/quote', jsonPost({ items: [{ sku: 'E', price: 1 }] }))
    const id = made.headers.get('x-run-id')!
    let text = ''
    const decoder = new TextDecoder()
    while (!text.includes(id)) text += decoder.decode((await reader.read()).value)
    const block = text.split('\n\n').find((part) => part.includes(id))!
    expect(block).toMatch(/^id: [0-9a-z]+\.\d+\nevent: run\ndata: /)
    const data = JSON.parse(block.split('data: ')[1]!) as Record<string, unknown>
    expect(data).toMatchObject({ id, projectId: 'shop', flow: 'quote', status: 'success' })
    expect(data).not.toHaveProperty('trace')
    await reader.cancel()
    // The outsider's stream got the greeting only, never the run.
    const first = decoder.decode((await otherReader.read()).value)
    const more = await Promise.race([otherReader.read().then((r) => decoder.decode(r.value)), new Promise<string>((r) => setTimeout(() => r(''), 200))])
    expect(first + more).not.toContain(id)
    await otherReader.cancel()
  })
})

describe('stored runs', () => {
  it('never hold a secret: not from bodies, declared headers, upstream answers or settings', async () => {
    const response = await server.request(
      '/api/run/shop/leaky',
      jsonPost({ password: SECRET, url: `${upstream.url}/` }, { 'x-key': `k ${SECRET}`, authorization: `Bearer ${SECRET}` }),
    )
    expect(response.status).toBe(200)
    const id = response.headers.get('x-run-id')!
    const stored = await (await server.request(`/api/runs/shop/${id}`)).text()
    expect(stored).not.toContain(SECRET)
    const record = JSON.parse(stored) as {
      input: { body: { password: string }; headers: Record<string, string> }
      trace: { steps: { nodeId: string; output: unknown }[] }
    }
    expect(record.input.body.password).toBe('***')
    expect(record.input.headers).toEqual({ 'x-key': 'k ***' })
    expect(JSON.stringify(record.trace.steps.find((s) => s.nodeId === 'call')?.output)).toContain('Bearer ***')
    const page = await (await server.request(`/runs/shop/${id}`)).text()
    expect(page).not.toContain(SECRET)
  })

  it('a failed run logs its node and reason; a 400 logs its error strings and never the values', async () => {
    server.logs.length = 0
    await server.request('/api/run/shop/fetch-status', jsonPost({ url: 'http://127.0.0.1:1/' }, { authorization: `Bearer ${ORDERS_TOKEN}` }))
    await server.request('/api/run/shop/create-order', jsonPost({ sku: 'SECRET-SKU-VALUE', qty: 500 }, { authorization: `Bearer ${ORDERS_TOKEN}` }))
    const log = server.logs.join('\n')
    expect(log).toMatch(/run \w+ shop\/fetch-status failed at node call: .+/)
    expect(log).toContain('400 shop/create-order: body/qty: must be <= 100')
    expect(log).not.toContain('SECRET-SKU-VALUE')
  })
})

describe('pages escape what authors and callers write', () => {
  it('a flow named <script> and a run output with markup show as text', async () => {
    const dashboard = await (await server.request('/')).text()
    expect(dashboard).not.toContain('<script>alert(1)</script>')
    expect(dashboard).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Hello')
    const made = await server.request('/api/run/shop/quote', jsonPost({ items: [{ sku: '<img src=x onerror=alert(1)>', price: 1 }] }))
    const page = await (await server.request(`/runs/shop/${made.headers.get('x-run-id')}`)).text()
    expect(page).not.toContain('<img src=x')
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;')
    const headers = (await server.request('/')).headers
    expect(headers.get('content-security-policy')).toMatch(/script-src 'nonce-[^']+'/)
  })
})
