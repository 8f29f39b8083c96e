// Issue 19 findings on the HTTP side: an honest /api/status, a hint for a broken flow, _trace values,
// a masked response body in trace answers, and boolean query values written as 1/0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from '../helpers.js'
import { TEST_ENV } from './flows.js'
import { startTestServer, type TestServer } from './setup.js'

const FLOWS: Record<string, string> = {
  'leaky.yaml': `name: Leaky
nodes:
  - { id: start, type: start, name: Start, method: get, next: done }
  - { id: done, type: end, name: Done, body: { token: "\${secrets.MASKED}", note: "is \${secrets.MASKED}" } }
`,
  // Fails to load: an unknown node type.
  'broken-flow.yaml': `name: Broken Flow
nodes:
  - { id: start, type: start, name: Start, method: get, next: done }
  - { id: done, type: ending, name: Done }
`,
}

const servers: TestServer[] = []
async function server(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const started = await startTestServer({ env: TEST_ENV, ...options })
  servers.push(started)
  return started
}

afterAll(async () => {
  for (const s of servers) await s.close()
  await cleanupTempDirs()
})

async function tick(s: TestServer): Promise<void> {
  const store = await s.workspace.storeFor('shop')
  await store!.schedules.saveHeartbeat({ projectId: 'shop', at: new Date().toISOString(), summary: {} })
}

describe('/api/status ok', () => {
  it('is true with every store open, no load errors and a fresh heartbeat', async () => {
    const s = await server()
    await tick(s)
    const view = await (await s.request('/api/status')).json()
    expect(view).toMatchObject({ ok: true, reasons: [] })
    expect(view.projects[0]).toMatchObject({ ok: true, reasons: [] })
  })

  it('is false while schedules exist and no tick came (stale heartbeat), and the page says so', async () => {
    const s = await server()
    const view = await (await s.request('/api/status')).json()
    expect(view.ok).toBe(false)
    expect(view.reasons).toEqual(['the scheduler heartbeat is stale while schedules exist (one project)'])
    expect(view.projects[0].ok).toBe(false)
    expect(view.projects[0].reasons[0]).toMatch(/^schedules exist but the scheduler heartbeat is stale/)
    const page = await (await s.request('/status')).text()
    expect(page).toContain('degraded')
    expect(page).toContain('the scheduler heartbeat is stale while schedules exist')
    // Anyone else sees the overall answer and why, without project details.
    const remote = await server({ app: { fallbackClientIp: '203.0.113.9' } })
    const publicView = await (await remote.request('/api/status')).json()
    expect(Object.keys(publicView).sort()).toEqual(['heartbeat', 'ok', 'reasons'])
    expect(publicView.ok).toBe(false)
  })

  it('is false when a project has load errors', async () => {
    const s = await server({ flows: FLOWS })
    await tick(s)
    const view = await (await s.request('/api/status')).json()
    expect(view.ok).toBe(false)
    expect(view.reasons).toEqual(['a project has load errors'])
    expect(view.projects[0].reasons).toEqual(['flow files have load errors (see Load problems)'])
    expect(await (await s.request('/status')).text()).toContain('flow files have load errors')
  })

  it('is false when a store is unreachable', async () => {
    const s = await server({ settings: [['database: embedded', 'database: postgres://nobody@127.0.0.1:1/none']] })
    const view = await (await s.request('/api/status')).json()
    expect(view.ok).toBe(false)
    expect(view.reasons).toContain('a store is unreachable')
    expect(view.projects[0].reasons).toContain('the store is unreachable')
  })
})

describe('/status times', () => {
  it("shows a schedule's next run in the schedule's zone (03:00 in Berlin), with UTC beside it", async () => {
    const s = await server()
    const view = await (await s.request('/api/status')).json()
    const nextRun = view.projects[0].schedules[0].nextRun as string
    expect(nextRun).toMatch(/T0[12]:00:00\.000Z$/)
    const page = await (await s.request('/status')).text()
    expect(page).toContain(`<td>${nextRun}</td>`)
    expect(page).toMatch(/<td>\d{4}-\d\d-\d\d 03:00 GMT\+0[12]:00<\/td>/)
  })
})

describe('the Run API', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await server({ flows: FLOWS })
  })

  it('answers a broken flow with the spec 404 body plus a hint naming its file (local callers)', async () => {
    const response = await s.request('/api/run/shop/broken-flow')
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({
      ok: false,
      errors: ['flow not found'],
      hint: 'flows/broken-flow.yaml has load errors, so its flow is not served; see /status or run flowctl validate',
    })
    expect(await (await s.request('/api/run/shop/no-such-flow')).json()).toEqual({ ok: false, errors: ['flow not found'] })
  })

  it('gives no hint to a remote caller', async () => {
    const remote = await server({ flows: FLOWS, app: { fallbackClientIp: '203.0.113.9' } })
    expect(await (await remote.request('/api/run/shop/broken-flow')).json()).toEqual({ ok: false, errors: ['flow not found'] })
  })

  it('masks secrets in the response body of a trace answer, not in the plain answer', async () => {
    const traced = await s.request('/api/run/shop/leaky?_trace=1')
    const text = await traced.text()
    expect(text).not.toContain('super-secret-value')
    expect(JSON.parse(text).response).toEqual({ status: 200, body: { token: '***', note: 'is ***' } })
    expect(await (await s.request('/api/run/shop/leaky')).json()).toEqual({ token: 'super-secret-value', note: 'is super-secret-value' })
  })

  it.each(['1', 'true'])('_trace=%s traces', async (value) => {
    const body = await (await s.request(`/api/run/shop/leaky?_trace=${value}`)).json()
    expect(body.trace.steps.map((step: { nodeId: string }) => step.nodeId)).toEqual(['start', 'done'])
  })

  it.each(['0', 'false'])('_trace=%s does not trace', async (value) => {
    const body = await (await s.request(`/api/run/shop/leaky?_trace=${value}`)).json()
    expect(body).not.toHaveProperty('trace')
  })

  it('rejects any other _trace value with 400 instead of ignoring it', async () => {
    const response = await s.request('/api/run/shop/leaky?_trace=yes')
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ ok: false, errors: ['query/_trace: must be 1 or true (0 or false to turn it off), got "yes"'] })
  })

  it('accepts ?verbose=1 for a boolean query input', async () => {
    const response = await s.request('/api/run/shop/order-status/open?verbose=1')
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ verbose: true })
  })

  it('405 Allow lists OPTIONS too', async () => {
    const response = await s.request('/api/run/shop/leaky', { method: 'POST' })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
  })
})
