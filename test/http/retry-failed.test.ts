// Retry from the failed step over HTTP against the real app (in process): `POST
// /api/replay/<projectId>/<runId>?from=failed`, the answer's shape, its refusals, the record in the
// read APIs, and the run page's "Retry from failed node" button. A counting upstream shows that the
// steps before the failed node are not executed again.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from '../helpers.js'
import { TEST_ENV } from './flows.js'
import { jsonPost, startTestServer, type TestServer } from './setup.js'

let server: TestServer
let upstream: Server
let upstreamUrl = ''
const hits = new Map<string, number>()

/** `/count/<key>` answers `{ n }`; `/flip/<key>` answers 500 the first time, then 200. */
async function startUpstream(): Promise<void> {
  upstream = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!
    const n = (hits.get(path) ?? 0) + 1
    hits.set(path, n)
    const status = path.startsWith('/flip/') && n === 1 ? 500 : 200
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ n }))
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
}

const retryFlow = (url: string) => `name: Retryable
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { key: { type: string } }, required: [key] } }, next: fetch }
  - { id: fetch, type: http, name: Fetch, method: get, url: "${url}/count/{{start.key}}", next: save }
  - { id: save, type: insert, name: Save, collection: retried, document: { key: "{{start.key}}" }, next: check }
  - { id: check, type: http, name: Check, method: get, url: "${url}/flip/{{start.key}}", failOnStatus: true, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { id: "{{save.insertedId}}", fetched: "{{fetch.body.n}}" } }
`

/** A flow whose step before the failure keeps a secret: its stored output has `***`, so it cannot be reused. */
const SECRETIVE = `name: Secretive
nodes:
  - { id: start, type: start, name: Start, next: sign }
  - { id: sign, type: set, name: Sign, values: { auth: "Bearer \${secrets.API_KEY}" }, next: check }
  - { id: check, type: http, name: Check, method: get, url: "http://127.0.0.1:1/x", next: done }
  - { id: done, type: end, name: Done }
`

beforeAll(async () => {
  await startUpstream()
  server = await startTestServer({ flows: { 'retryable.yaml': retryFlow(upstreamUrl), 'secretive.yaml': SECRETIVE }, env: TEST_ENV })
})

afterAll(async () => {
  await server.close()
  await new Promise<void>((resolve) => upstream.close(() => resolve()))
  await cleanupTempDirs()
})

/** A run of Retryable for `key` that fails at node check (its upstream answers 500 the first time). */
async function failedRun(key: string): Promise<string> {
  const response = await server.request('/api/run/shop/retryable', jsonPost({ key }))
  expect(response.status).toBe(500)
  expect(await response.json()).toMatchObject({ nodeId: 'check' })
  return response.headers.get('x-run-id')!
}

describe('POST /api/replay/<projectId>/<runId>?from=failed', () => {
  it('answers the new run with replayOf and resumedFrom; the steps before the failed node ran once in total', async () => {
    const runId = await failedRun('http-a')
    const response = await server.request(`/api/replay/shop/${runId}?from=failed`, { method: 'POST' })
    expect(response.status).toBe(201)
    const body = (await response.json()) as { runId: string; trace: { steps: { nodeId: string; reused?: boolean }[] } }
    expect(body).toMatchObject({ replayOf: runId, resumedFrom: 'check', response: { status: 201, body: { fetched: 1 } } })
    expect(response.headers.get('x-run-id')).toBe(body.runId)
    expect(body.trace.steps.map((s) => `${s.nodeId}${s.reused ? ' (reused)' : ''}`)).toEqual(['start', 'fetch (reused)', 'save (reused)', 'check', 'done'])
    expect(hits.get('/count/http-a')).toBe(1)
    expect(hits.get('/flip/http-a')).toBe(2)

    const record = (await (await server.request(`/api/runs/shop/${body.runId}`)).json()) as Record<string, unknown>
    expect(record).toMatchObject({ replayOf: runId, resumedFrom: 'check', status: 'success' })
    const listed = (await (await server.request('/api/runs/shop?flow=retryable&limit=1')).json()) as Record<string, unknown>[]
    expect(listed[0]).toMatchObject({ id: body.runId, resumedFrom: 'check' })
    // A plain replay is no retry: its record says resumedFrom null, and its answer has no resumedFrom.
    const whole = await server.request(`/api/replay/shop/${runId}`, { method: 'POST' })
    expect(Object.keys((await whole.json()) as object)).not.toContain('resumedFrom')
    expect(hits.get('/count/http-a')).toBe(2)
    // The dashboard's last runs tell the two apart: the newest is the replay, the one before the retry.
    const dashboard = await (await server.request('/')).text()
    const badges = [...dashboard.matchAll(/<span class="badge info">(retry|replay)<\/span>/g)].map((match) => match[1])
    expect(badges.slice(0, 2)).toEqual(['replay', 'retry'])
  })

  it('refuses a run that did not fail (409), and any other from (400); nothing runs', async () => {
    const ok = await server.request('/api/run/shop/retryable', jsonPost({ key: 'http-b' }))
    const okId = ok.headers.get('x-run-id')!
    // The first call of /flip/http-b failed the run; this one passes.
    expect(ok.status).toBe(500)
    const passed = await server.request('/api/run/shop/retryable', jsonPost({ key: 'http-b' }))
    expect(passed.status).toBe(201)
    const before = hits.get('/count/http-b')
    const refused = await server.request(`/api/replay/shop/${passed.headers.get('x-run-id')}?from=failed`, { method: 'POST' })
    expect(refused.status).toBe(409)
    expect(await refused.json()).toEqual({ ok: false, errors: [expect.stringContaining('did not fail (its status is "success")')] })
    const wrong = await server.request(`/api/replay/shop/${okId}?from=start`, { method: 'POST' })
    expect(wrong.status).toBe(400)
    expect(await wrong.json()).toEqual({ ok: false, errors: ['from: must be "failed" (or left out to replay the whole run)'] })
    expect((await server.request(`/api/replay/shop/nope?from=failed`, { method: 'POST' })).status).toBe(404)
    expect(hits.get('/count/http-b')).toBe(before)
  })
})

describe('the run page: "Retry from failed node"', () => {
  it('shows the button on a failed run with a stored trace, not on a successful one', async () => {
    const runId = await failedRun('page-a')
    const page = await (await server.request(`/runs/shop/${runId}`)).text()
    expect(page).toContain(`action="/runs/shop/${runId}/replay?from=failed"`)
    expect(page).toContain('id="retry-failed"')
    const again = await server.request('/api/run/shop/retryable', jsonPost({ key: 'page-a' }))
    expect(again.status).toBe(201)
    const okPage = await (await server.request(`/runs/shop/${again.headers.get('x-run-id')}`)).text()
    expect(okPage).toContain('id="replay"')
    expect(okPage).not.toContain('retry-failed')
  })

  it('a failed run whose earlier step cannot be reused says why instead of showing the button; the API refuses it (409)', async () => {
    const failed = await server.request('/api/run/shop/secretive', jsonPost({}))
    expect(failed.status).toBe(500)
    const runId = failed.headers.get('x-run-id')!
    const page = await (await server.request(`/runs/shop/${runId}`)).text()
    expect(page).not.toContain('id="retry-failed"')
    expect(page).toContain(
      'id="retry-unavailable">Retry from the failed node is not possible: the stored output of step &quot;sign&quot; has a secret masked as ***',
    )
    const refused = await server.request(`/api/replay/shop/${runId}?from=failed`, { method: 'POST' })
    expect(refused.status).toBe(409)
    expect(((await refused.json()) as { errors: string[] }).errors[0]).toBe(
      `run ${runId} cannot be retried from node "check": the stored output of step "sign" has a secret masked as ***, so it cannot be reused; replay the run whole instead`,
    )
  })

  it('the button retries (303 to the new run), whose page says what it resumed from and which steps it reused', async () => {
    const runId = await failedRun('page-b')
    const response = await server.request(`/runs/shop/${runId}/replay?from=failed`, { method: 'POST' })
    expect(response.status).toBe(303)
    const location = response.headers.get('location')!
    expect(location).toMatch(/^\/runs\/shop\//)
    expect(hits.get('/count/page-b')).toBe(1)
    const page = await (await server.request(location)).text()
    expect(page).toContain('<dt>Retry of</dt>')
    expect(page).toMatch(/id="resumed-from">node <code>check<\/code>/)
    expect(page.match(/reused from the failed run/g)).toHaveLength(2)
    // A retried run that passed has no failed node: no retry button on its page.
    expect(page).not.toContain('id="retry-failed"')
    // Retrying a run that did not fail from the page says why.
    const refused = await server.request(`${location}/replay?from=failed`, { method: 'POST' })
    expect(refused.status).toBe(409)
    expect(await refused.text()).toContain('did not fail')
  })
})
