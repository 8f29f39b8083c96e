// SPEC §12's guards through the real app in-process (real loader, real SQLite store): the edges
// of idempotency keys and flow concurrency that the e2e suite (test/e2e/guards.test.ts) leaves out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from '../helpers.js'
import { startTestServer, type TestServer } from './setup.js'

const FLOWS: Record<string, string> = {
  // Fails when asked to (an http node to a closed port), so a failed run's key can be retried.
  'charge.yaml': `name: Charge
nodes:
  - id: start
    type: start
    name: Start
    method: post
    idempotency: { header: X-Request-Id, ttlSeconds: 60 }
    inputs: { body: { type: object, required: [fail], properties: { fail: { type: boolean } } } }
    next: route
  - { id: route, type: if, name: Route, condition: { left: "{{ start.fail }}", op: eq, right: true }, next: { true: broken, false: done } }
  - { id: broken, type: http, name: Broken, method: get, url: "http://127.0.0.1:9/", timeoutMs: 500, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { run: "{{ run.id }}" } }
`,
  'nothing.yaml': `name: Nothing
nodes:
  - { id: start, type: start, name: Start, method: post, idempotency: {}, next: mark }
  - { id: mark, type: set, name: Mark, values: { ok: true } }
`,
}

describe('guards on the Run API', () => {
  let server: TestServer
  const post = (slug: string, body: unknown, headers: Record<string, string> = {}) =>
    server.request(`/api/run/shop/${slug}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

  beforeAll(async () => {
    server = await startTestServer({ flows: FLOWS, settings: [['runsPerMinutePerIp: 60', 'runsPerMinutePerIp: 0']] })
  })
  afterAll(async () => {
    await server.close()
    await cleanupTempDirs()
  })

  it('releases the key of a failed run (500) and of a rejected body (400): the retry runs', async () => {
    const key = { 'x-request-id': 'retry-1' }
    const invalid = await post('charge', { fail: 'yes' }, key)
    expect(invalid.status).toBe(400)
    const failed = await post('charge', { fail: true }, key)
    expect(failed.status).toBe(500)
    const failedRun = failed.headers.get('x-run-id')
    const again = await post('charge', { fail: true }, key)
    expect(again.status).toBe(500)
    expect(again.headers.get('idempotent-replayed')).toBeNull()
    expect(again.headers.get('x-run-id')).not.toBe(failedRun)
  })

  it('replays a stored answer with the fingerprint ignoring JSON key order, and refuses an over-long key', async () => {
    const first = await server.request('/api/run/shop/charge', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'k-2' },
      body: '{"fail":false,"note":1}',
    })
    expect(first.status).toBe(201)
    const repeat = await server.request('/api/run/shop/charge', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'k-2' },
      body: '{"note":1,"fail":false}',
    })
    expect(repeat.status).toBe(201)
    expect(repeat.headers.get('idempotent-replayed')).toBe('true')
    expect(await repeat.json()).toEqual(await first.json())
    const long = await post('charge', { fail: false }, { 'x-request-id': 'x'.repeat(256) })
    expect(long.status).toBe(400)
    expect(await long.json()).toEqual({ ok: false, errors: ['header/X-Request-Id: must be at most 255 characters'] })
  })

  it('replays a bodiless 204 as a 204, and leaves requests without the header alone', async () => {
    const first = await post('nothing', {}, { 'idempotency-key': 'n-1' })
    expect(first.status).toBe(204)
    const repeat = await post('nothing', {}, { 'idempotency-key': 'n-1' })
    expect(repeat.status).toBe(204)
    expect(repeat.headers.get('idempotent-replayed')).toBe('true')
    expect(repeat.headers.get('x-run-id')).toBe(first.headers.get('x-run-id'))
    const plain = await post('nothing', {})
    expect(plain.headers.get('x-run-id')).not.toBe(first.headers.get('x-run-id'))
  })
})
