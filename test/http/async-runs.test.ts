// Async runs over HTTP (SPEC §12), in-process on fixtures/async-jobs with a real SQLite store: the
// 202 and its Location, the checks that come before queueing, the result route, and the workers.
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { AsyncRunner } from '../../src/http/async-runner.js'
import { cleanupTempDirs, eventually } from '../helpers.js'
import { jsonPost, startTestServer, type TestServer } from './setup.js'

const TOKEN = 'dev-jobs-token-change-me'
const auth = { authorization: `Bearer ${TOKEN}` }
const orders = { orders: [{ sku: 'A-1' }, { sku: 'B-2' }] }

afterAll(cleanupTempDirs)

let server: TestServer
let runner: AsyncRunner | null = null

async function start(withWorkers: boolean): Promise<void> {
  server = await startTestServer({ fixture: 'async-jobs', app: { asyncQueued: (projectId) => runner?.wake(projectId) } })
  if (withWorkers) runner = new AsyncRunner(server.workspace, { pollMs: 50 }).start()
}

afterEach(async () => {
  await runner?.stop(1000)
  runner = null
  await server?.close()
})

async function result(runId: string, headers: Record<string, string> = auth): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await server.request(`/api/result/jobs/${runId}`, { headers })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

describe('respond: async', () => {
  it('answers 202 with the run id and its Location, then runs it in the background under that id', async () => {
    await start(true)
    const response = await server.request('/api/run/jobs/import-orders', jsonPost(orders, auth))
    expect(response.status).toBe(202)
    const body = (await response.json()) as { runId: string }
    expect(body).toEqual({ ok: true, runId: expect.any(String), status: 'queued' })
    expect(response.headers.get('location')).toBe(`/api/result/jobs/${body.runId}`)
    expect(response.headers.get('x-run-id')).toBe(body.runId)

    await eventually(async () => (await result(body.runId)).body.status === 'success', 5000)
    const done = await result(body.runId)
    expect(done.status).toBe(200)
    expect(done.body).toEqual({ runId: body.runId, status: 'success', response: { status: 201, body: { batchId: expect.any(String), imported: 2 } } })

    const store = server.workspace.get('jobs')!.store!
    const record = await store.history.getRun('jobs', body.runId)
    expect(record).toMatchObject({ id: body.runId, flow: 'import-orders', trigger: 'http', method: 'POST', status: 'success', httpStatus: 201 })
    const batchId = (done.body.response as { body: { batchId: string } }).body.batchId
    expect(await store.documents.get('jobs', 'imports', batchId)).toMatchObject({ count: 2, orders: orders.orders })
  })

  it('answers a repeated Idempotency-Key with the first 202 (same run id) and queues one run', async () => {
    await start(false)
    const headers = { ...auth, 'idempotency-key': 'import-7' }
    const first = await server.request('/api/run/jobs/import-orders', jsonPost(orders, headers))
    expect(first.status).toBe(202)
    const { runId } = (await first.json()) as { runId: string }
    const again = await server.request('/api/run/jobs/import-orders', jsonPost(orders, headers))
    expect(again.status).toBe(202)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('location')).toBe(`/api/result/jobs/${runId}`)
    expect(await again.json()).toEqual({ ok: true, runId, status: 'queued' })
    const other = await server.request('/api/run/jobs/import-orders', jsonPost({ orders: [{ sku: 'C-3' }] }, headers))
    expect(other.status).toBe(422)
    const store = server.workspace.get('jobs')!.store!
    const claimed = await store.queue.claim('jobs', { limit: 10, leaseMs: 10_000, token: 'test-claim' })
    expect(claimed.map((run) => run.id)).toEqual([runId])
  })

  it('keeps the run queued while no worker runs, and a worker started later runs it', async () => {
    await start(false)
    const response = await server.request('/api/run/jobs/import-orders', jsonPost(orders, auth))
    const { runId } = (await response.json()) as { runId: string }
    expect(await result(runId)).toEqual({ status: 200, body: { runId, status: 'queued', response: null } })
    runner = new AsyncRunner(server.workspace, { pollMs: 50 }).start()
    await eventually(async () => (await result(runId)).body.status === 'success', 5000)
  })

  it('checks auth and validates the inputs before queueing: 401 and 400 as for any run, nothing queued', async () => {
    await start(false)
    const denied = await server.request('/api/run/jobs/import-orders', jsonPost(orders))
    expect(denied.status).toBe(401)
    expect(await denied.json()).toEqual({ ok: false, errors: ['missing credential'] })
    const invalid = await server.request('/api/run/jobs/import-orders', jsonPost({ orders: [] }, auth))
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toEqual({ ok: false, errors: ['body/orders: must NOT have fewer than 1 items'] })
    expect(invalid.headers.get('location')).toBeNull()
    const store = server.workspace.get('jobs')!.store!
    expect(await store.queue.claim('jobs', { limit: 10, leaseMs: 1000, token: 'probe' })).toEqual([])
  })

  it('records a failed run as error, with the 500 a synchronous call would have got', async () => {
    const failing = [
      'name: Notify',
      'nodes:',
      '  - { id: start, type: start, name: Start, method: post, respond: async, next: call }',
      '  - { id: call, type: http, name: Call, method: post, url: "http://127.0.0.1:9/closed", timeoutMs: 2000, next: done }',
      '  - { id: done, type: end, name: Done, body: { ok: true } }',
      '',
    ].join('\n')
    server = await startTestServer({ fixture: 'async-jobs', flows: { 'notify.yaml': failing }, app: { asyncQueued: (projectId) => runner?.wake(projectId) } })
    runner = new AsyncRunner(server.workspace, { pollMs: 50 }).start()
    const response = await server.request('/api/run/jobs/notify', jsonPost({}))
    expect(response.status).toBe(202)
    const { runId } = (await response.json()) as { runId: string }
    await eventually(async () => (await result(runId)).body.status === 'error', 5000)
    expect((await result(runId)).body).toEqual({
      runId,
      status: 'error',
      response: { status: 500, body: { ok: false, errors: ['node call failed'], nodeId: 'call', runId } },
    })
    expect(await server.workspace.get('jobs')!.store!.history.getRun('jobs', runId)).toMatchObject({ status: 'error', failedNodeId: 'call', httpStatus: 500 })
  })
})

describe('shutdown', () => {
  it('runs async runs of a flow with concurrency: { limit: 1 } one at a time (each 202 at once, none rejected)', async () => {
    await start(true)
    const answers = await Promise.all([1, 2, 3].map(() => server.request('/api/run/jobs/rebuild-index', jsonPost({}, auth))))
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202])
    const ids = await Promise.all(answers.map(async (a) => ((await a.json()) as { runId: string }).runId))
    await eventually(async () => (await Promise.all(ids.map((id) => result(id)))).every((r) => r.body.status === 'success'), 10_000)
    const store = server.workspace.get('jobs')!.store!
    const records = await Promise.all(ids.map(async (id) => (await store.history.getRun('jobs', id))!))
    const spans = records.map((r) => [Date.parse(r.startedAt), Date.parse(r.startedAt) + r.durationMs] as const).sort((a, b) => a[0] - b[0])
    // Each run waits 150 ms; with one slot, each starts only after the one before has ended.
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1] - 1)
  })

  it('puts a run still going after the grace period back in the queue, unrecorded, for the next worker', async () => {
    const slow = [
      'name: Slow',
      'nodes:',
      '  - { id: start, type: start, name: Start, method: post, respond: async, next: pause }',
      '  - { id: pause, type: wait, name: Pause, ms: 1500, next: done }',
      '  - { id: done, type: end, name: Done, body: { ok: true } }',
      '',
    ].join('\n')
    server = await startTestServer({ fixture: 'async-jobs', flows: { 'slow.yaml': slow }, app: { asyncQueued: (projectId) => runner?.wake(projectId) } })
    runner = new AsyncRunner(server.workspace, { pollMs: 50 }).start()
    const { runId } = (await (await server.request('/api/run/jobs/slow', jsonPost({}))).json()) as { runId: string }
    await eventually(async () => (await result(runId)).body.status === 'running', 5000)
    await runner.stop(100)
    expect((await result(runId)).body).toEqual({ runId, status: 'queued', response: null })
    expect(await server.workspace.get('jobs')!.store!.history.getRun('jobs', runId)).toBeNull()
    runner = new AsyncRunner(server.workspace, { pollMs: 50 }).start()
    await eventually(async () => (await result(runId)).body.status === 'success', 5000)
  })
})

describe('GET /api/result/<projectId>/<runId>', () => {
  it("answers 404 for an unknown run or project, and 401 without the flow's credential", async () => {
    await start(false)
    expect(await result('no-such-run')).toEqual({ status: 404, body: { ok: false, errors: ['run not found'] } })
    const unknownProject = await server.request('/api/result/nope/x', { headers: auth })
    expect(unknownProject.status).toBe(404)
    const { runId } = (await (await server.request('/api/run/jobs/import-orders', jsonPost(orders, auth))).json()) as { runId: string }
    const denied = await server.request(`/api/result/jobs/${runId}`)
    expect(denied.status).toBe(401)
    expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer/)
    expect(await denied.json()).toEqual({ ok: false, errors: ['invalid token'] })
    expect((await result(runId, { authorization: 'Bearer wrong' })).status).toBe(401)
    const allowed = await server.request(`/api/result/jobs/${runId}`, { headers: auth })
    expect(allowed.status).toBe(200)
    expect(allowed.headers.get('cache-control')).toBe('no-store')
  })
})
