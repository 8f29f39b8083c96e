// /api/openapi, /api/runs, /api/cron/tick, /status, /docs and / against the real app.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addUser, grantUser } from '../../src/users/users-file.js'
import { cleanupTempDirs, makeTempDir } from '../helpers.js'
import { EXTRA_FLOWS, TEST_ENV } from './flows.js'
import { jsonPost, ORDERS_TOKEN, startTestServer, type TestServer } from './setup.js'

let usersFile: string
let viewer: string
let outsider: string
let server: TestServer
let remote: TestServer

beforeAll(async () => {
  usersFile = join(await makeTempDir('flowctl-users-'), 'users.yaml')
  viewer = (await addUser(usersFile, 'vera', { shop: 'viewer' })).token
  outsider = (await addUser(usersFile, 'otto', { other: 'owner' })).token
  server = await startTestServer({ flows: EXTRA_FLOWS, env: TEST_ENV, app: { usersFile, cronSecret: 'tick-secret' } })
  // The same kind of app seen from a non-loopback client.
  remote = await startTestServer({ flows: EXTRA_FLOWS, env: TEST_ENV, app: { usersFile, fallbackClientIp: '203.0.113.9' } })
})

afterAll(async () => {
  await server.close()
  await remote.close()
  await cleanupTempDirs()
})

const asUser = (token: string, extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, ...extra } })

describe('GET /api/openapi/<projectId>', () => {
  it('401 without a token or with an unknown one, with WWW-Authenticate', async () => {
    for (const init of [{}, asUser('flowctl_not-a-user'), { headers: { authorization: 'Basic abc' } }]) {
      const response = await server.request('/api/openapi/shop', init)
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="flowctl"')
      expect(await response.json()).toEqual({ ok: false, errors: ['invalid token'] })
    }
  })

  it('401 before 404: an unknown project is only revealed to a signed-in user', async () => {
    expect((await server.request('/api/openapi/nope')).status).toBe(401)
    const response = await server.request('/api/openapi/nope', asUser(outsider))
    expect(response.status).toBe(404)
  })

  it('403 for a user without a role on the project', async () => {
    const response = await server.request('/api/openapi/shop', asUser(outsider))
    expect(response.status).toBe(403)
    expect(await response.json()).toEqual({ ok: false, errors: ['forbidden'] })
  })

  it('200 with the document for a viewer: no-store, no CORS, servers[0] = the request origin', async () => {
    const response = await server.request('/api/openapi/shop', asUser(viewer))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('application/json')
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
    const document = await response.json()
    expect(document).toMatchObject({ openapi: '3.0.3', info: { title: 'Shop API', version: '1.0.0' }, servers: [{ url: 'http://localhost' }] })
    expect(Object.keys(document.paths)).toContain('/api/run/shop/order-status/{state}')
  })

  it('takes X-Forwarded-Host/Proto for the server URL only with trust-proxy', async () => {
    const forwarded = { 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' }
    const plain = await (await server.request('/api/openapi/shop', asUser(viewer, forwarded))).json()
    expect(plain.servers[0].url).toBe('http://localhost')
    const proxied = await startTestServer({ app: { usersFile, trustProxy: true } })
    try {
      const document = await (await proxied.request('/api/openapi/shop', asUser(viewer, forwarded))).json()
      expect(document.servers[0].url).toBe('https://api.example.com')
    } finally {
      await proxied.close()
    }
  })

  it('re-reads the users file when it changes', async () => {
    const file = join(await makeTempDir('flowctl-users-'), 'users.yaml')
    const late = await startTestServer({ app: { usersFile: file } })
    try {
      const { token } = await addUser(file, 'lena', {})
      expect((await late.request('/api/openapi/shop', asUser(token))).status).toBe(403)
      await new Promise((r) => setTimeout(r, 20)) // a distinct mtime
      await grantUser(file, 'lena', 'shop', 'viewer')
      expect((await late.request('/api/openapi/shop', asUser(token))).status).toBe(200)
      await writeFile(file, 'not: [valid')
      expect((await late.request('/api/openapi/shop', asUser(token))).status).toBe(401)
    } finally {
      await late.close()
    }
  })
})

describe('GET /api/runs/<projectId>', () => {
  it('follows the same sign-in rules for a non-loopback caller; loopback needs no token (SPEC §14)', async () => {
    expect((await remote.request('/api/runs/shop')).status).toBe(401)
    expect((await remote.request('/api/runs/shop', asUser(outsider))).status).toBe(403)
    expect((await remote.request('/api/runs/nope', asUser(viewer))).status).toBe(404)
    expect((await remote.request('/api/runs/shop', asUser(viewer))).status).toBe(200)
    expect((await server.request('/api/runs/shop')).status).toBe(200)
    // A loopback socket with a foreign Host header (DNS rebinding) is not loopback (SPEC §17).
    expect((await server.request('/api/runs/shop', { headers: { host: 'attacker.example' } })).status).toBe(401)
  })

  it('lists records newest first, filtered by flow and status, limited', async () => {
    await server.request('/api/run/shop/order-status/open')
    await server.request('/api/run/shop/order-status/shipped')
    await server.request('/api/run/shop/fetch-status', jsonPost({ url: 'http://127.0.0.1:1/' }, { authorization: `Bearer ${ORDERS_TOKEN}` }))
    const all = (await (await server.request('/api/runs/shop', asUser(viewer))).json()) as { startedAt: string; flow: string; status: string }[]
    expect(all.length).toBeGreaterThanOrEqual(3)
    expect([...all].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).map((r) => r.startedAt)).toEqual(all.map((r) => r.startedAt))
    const byFlow = (await (await server.request('/api/runs/shop?flow=order-status&limit=1', asUser(viewer))).json()) as unknown[]
    expect(byFlow).toEqual([expect.objectContaining({ flow: 'order-status', httpStatus: 200 })])
    const errors = (await (await server.request('/api/runs/shop?status=error', asUser(viewer))).json()) as { status: string }[]
    expect(errors.length).toBeGreaterThanOrEqual(1)
    expect(errors.every((r) => r.status === 'error')).toBe(true)
  })

  it('400 for a bad status or limit', async () => {
    expect((await server.request('/api/runs/shop?status=weird', asUser(viewer))).status).toBe(400)
    expect((await server.request('/api/runs/shop?limit=abc', asUser(viewer))).status).toBe(400)
    expect((await server.request('/api/runs/shop?limit=0', asUser(viewer))).status).toBe(400)
    expect((await server.request('/api/runs/shop?limit=5000', asUser(viewer))).status).toBe(200)
  })
})

describe('/api/cron/tick', () => {
  it('401 and nothing runs when the secret is missing, wrong or unset', async () => {
    const noSecret = await startTestServer()
    try {
      for (const [target, init] of [
        [server, { method: 'POST' }],
        [server, { method: 'POST', headers: { 'x-cron-secret': 'wrong' } }],
        [server, { method: 'GET', headers: { authorization: 'Bearer tick-secre' } }],
        [noSecret, { method: 'POST', headers: { 'x-cron-secret': '' } }],
        [noSecret, { method: 'POST', headers: { authorization: 'Bearer undefined' } }],
      ] as [TestServer, RequestInit][]) {
        const response = await target.request('/api/cron/tick', init)
        expect(response.status).toBe(401)
        expect(await response.json()).toEqual({ ok: false, errors: ['invalid token'] })
      }
      expect(await (await server.workspace.storeFor('shop'))!.schedules.getHeartbeat('shop')).toBeNull()
    } finally {
      await noSecret.close()
    }
  })

  it('200 with the summary for the right secret, by header or bearer, and records the heartbeat', async () => {
    for (const init of <RequestInit[]>[
      { method: 'POST', headers: { 'x-cron-secret': 'tick-secret' } },
      { method: 'GET', headers: { authorization: 'Bearer tick-secret' } },
    ]) {
      const response = await server.request('/api/cron/tick', init)
      expect(response.status).toBe(200)
      const summary = await response.json()
      expect(Object.keys(summary).sort()).toEqual([
        'alertsChecked',
        'alertsSent',
        'at',
        'digestsChecked',
        'digestsSent',
        'dryRun',
        'errors',
        'ok',
        'ran',
        'runs',
      ])
      expect(summary.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/)
    }
    const heartbeat = await (await server.workspace.storeFor('shop'))!.schedules.getHeartbeat('shop')
    expect(heartbeat).not.toBeNull()
    const status = await (await server.request('/api/status')).json()
    expect(status.heartbeat).toEqual({ at: heartbeat!.at, stale: false })
  })
})

describe('/status and /api/status', () => {
  it('shows everything to a loopback client', async () => {
    const view = await (await server.request('/api/status')).json()
    expect(view.ok).toBe(true)
    const shop = view.projects[0]
    expect(shop).toMatchObject({ projectId: 'shop', name: 'Shop API', store: { kind: 'sqlite', ok: true, error: null } })
    expect(shop.flows).toContainEqual({
      slug: 'order-status',
      name: 'Order Status',
      file: 'flows/order-status.yaml',
      method: 'GET',
      path: '/api/run/shop/order-status/{state}',
      http: true,
      start: true,
    })
    expect(shop.schedules).toEqual([
      {
        flow: 'nightly-cleanup',
        cron: '0 3 * * *',
        timezone: 'Europe/Berlin',
        enabled: true,
        nextRun: expect.any(String),
        nextRunLocal: expect.stringMatching(/^\d{4}-\d\d-\d\d 03:00 GMT\+0[12]:00$/),
        catchUp: 'none',
        catchUpMinutes: 60,
      },
    ])
    expect(Array.isArray(shop.recentRuns)).toBe(true)
    expect(Array.isArray(shop.recentFailures)).toBe(true)
    expect(shop).toHaveProperty('rejected')
    expect(shop).toHaveProperty('problems')
  })

  it("shows a scheduled run's minute in UTC and in its schedule's zone, and next runs in both (SPEC §16)", async () => {
    const store = (await server.workspace.storeFor('shop'))!
    await store.history.recordRun(
      {
        id: 'run_scheduled_status',
        projectId: 'shop',
        flow: 'nightly-cleanup',
        trigger: 'cron',
        method: 'CRON',
        startedAt: new Date().toISOString(),
        durationMs: 1,
        status: 'success',
        httpStatus: 204,
        ports: [],
        failedNodeId: null,
        error: null,
        scheduledFor: '2026-11-21T02:00:00.000Z',
        replayOf: null,
        resumedFrom: null,
      },
      10_000,
    )
    const page = await (await server.request('/status')).text()
    expect(page).toContain('<th>scheduled for</th>')
    expect(page).toContain('2026-11-21 02:00 UTC<br><span class="muted">2026-11-21 03:00 GMT+01:00</span>')
    expect(page).toMatch(/<th>next run \(UTC\)<\/th><th>next run \(its zone\)<\/th>/)
    expect(page).toMatch(/<td>\d{4}-\d\d-\d\d 03:00 GMT\+0[12]:00<\/td>/)
    const runs = await (await server.request('/api/runs/shop?flow=nightly-cleanup', asUser(viewer))).json()
    expect(runs.find((r: { id: string }) => r.id === 'run_scheduled_status')).toMatchObject({ scheduledFor: '2026-11-21T02:00:00.000Z' })
  })

  it('shows only health and the heartbeat to anyone else, even with a forged X-Forwarded-For', async () => {
    for (const init of [{}, { headers: { 'x-forwarded-for': '127.0.0.1' } }, asUser('flowctl_nobody')]) {
      const view = await (await remote.request('/api/status', init)).json()
      expect(Object.keys(view).sort()).toEqual(['heartbeat', 'ok', 'reasons'])
      expect(Object.keys(view.heartbeat).sort()).toEqual(['at', 'stale'])
      const page = await (await remote.request('/status', init)).text()
      expect(page).not.toContain('order-status')
    }
  })

  it('shows a signed-in user their projects only', async () => {
    const mine = await (await remote.request('/api/status', asUser(viewer))).json()
    expect(mine.projects.map((p: { projectId: string }) => p.projectId)).toEqual(['shop'])
    expect(mine).not.toHaveProperty('rejectedUnknownProject')
    const none = await (await remote.request('/api/status', asUser(outsider))).json()
    expect(none.projects).toEqual([])
  })

  it('serves a self-contained HTML page with every name escaped', async () => {
    const response = await server.request('/status')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/html')
    const page = await response.text()
    expect(page).toContain('Shop API')
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Hello')
    expect(page).not.toContain('<script>alert(1)')
    expect(page).not.toMatch(/<script|<link|src=|@import|url\(/i)
  })
})

describe('/docs and /', () => {
  it('serves the reference page and its assets from swagger-ui-dist, offline', async () => {
    const page = await remote.request('/docs/shop')
    expect(page.status).toBe(200)
    const text = await page.text()
    expect(text).toContain('/docs/assets/swagger-ui-bundle.js')
    expect(text).toContain('sessionStorage')
    expect(text).not.toMatch(/https?:\/\//)
    expect(text).not.toContain('id="openapi-document"')
    const bundle = await server.request('/docs/assets/swagger-ui-bundle.js')
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get('content-type')).toContain('javascript')
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000)
    expect((await server.request('/docs/assets/swagger-ui.css')).headers.get('content-type')).toContain('text/css')
  })

  it('answers a browser that holds an asset with a 304 and no body', async () => {
    const first = await server.request('/docs/assets/swagger-ui.css')
    const etag = first.headers.get('etag')
    expect(etag).toMatch(/^W\/"[0-9a-f]+-[0-9a-f]+"$/)
    expect(first.headers.get('cache-control')).toBe('public, max-age=3600')
    const again = await server.request('/docs/assets/swagger-ui.css', { headers: { 'if-none-match': etag! } })
    expect(again.status).toBe(304)
    expect(again.headers.get('etag')).toBe(etag)
    expect(await again.text()).toBe('')
    // Another file's tag is not this one's.
    const other = await server.request('/docs/assets/swagger-ui-bundle.js', { headers: { 'if-none-match': etag! } })
    expect(other.status).toBe(200)
    expect((await other.arrayBuffer()).byteLength).toBeGreaterThan(100_000)
  })

  it('serves only the listed asset files', async () => {
    for (const path of [
      '/docs/assets/package.json',
      '/docs/assets/..%2Fpackage.json',
      '/docs/assets/%2e%2e%2f%2e%2e%2fpackage.json',
      '/docs/assets/index.js',
      '/docs/assets/__proto__',
    ]) {
      const response = await server.request(path)
      expect(response.status, path).toBe(404)
    }
    expect((await server.request('/docs/nope')).status).toBe(404)
  })

  it('links /status from /', async () => {
    const response = await server.request('/')
    expect(response.status).toBe(200)
    expect(await response.text()).toContain('href="/status"')
  })
})

describe('request log', () => {
  it('writes one line per request with method, path (no query), status, time and run id; never headers or bodies', async () => {
    server.logs.length = 0
    await server.request('/api/run/shop/order-status/open?token=abc123', { headers: { authorization: 'Bearer hidden-value' } })
    await server.request('/api/run/shop/quote', jsonPost({ items: [{ sku: 'body-value', price: 1 }] }))
    expect(server.logs).toHaveLength(2)
    expect(server.logs[0]).toMatch(/^GET \/api\/run\/shop\/order-status\/open 200 \d+\.\dms run \w+$/)
    expect(server.logs.join('\n')).not.toMatch(/abc123|hidden-value|body-value/)
  })

  it('is silent with quiet', async () => {
    const quiet = await startTestServer({ app: { quiet: true } })
    try {
      await quiet.request('/api/run/shop/order-status/open')
      expect(quiet.logs).toEqual([])
    } finally {
      await quiet.close()
    }
  })
})

describe('unexpected errors', () => {
  it('answer 500 "internal error" without details, and are logged even when quiet', async () => {
    const broken = await startTestServer({ app: { quiet: true } })
    try {
      broken.workspace.list = () => {
        throw new Error('secret detail from deep inside')
      }
      const response = await broken.request('/api/status')
      expect(response.status).toBe(500)
      const text = await response.text()
      expect(JSON.parse(text)).toEqual({ ok: false, errors: ['internal error'] })
      expect(text).not.toContain('secret detail')
      expect(broken.logs.join('\n')).toContain('secret detail from deep inside')
    } finally {
      broken.workspace.list = Object.getPrototypeOf(broken.workspace).list
      await broken.close()
    }
  })

  it('a failing history read answers 503', async () => {
    const closed = await startTestServer({ app: { usersFile } })
    try {
      await closed.workspace.get('shop')!.store!.close()
      const response = await closed.request('/api/runs/shop', asUser(viewer))
      expect(response.status).toBe(503)
      expect(await response.json()).toEqual({ ok: false, errors: ['store unavailable'] })
    } finally {
      await closed.close()
    }
  })
})
