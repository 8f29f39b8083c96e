// SPEC §20 "HTTP", against the real `flowctl serve`: every GET route answers HEAD with the GET's
// status and headers and no body, and a known route asked with another method answers 405 with Allow.
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, startServe } from '../helpers.js'

let server: ResultPromise
let base: string
let runId: string

beforeAll(async () => {
  const dir = await copyFixture('example')
  const started = await startServe([dir, '--quiet', '--no-watch'])
  server = started.child
  base = started.base
  const made = await fetch(`${base}/api/run/shop/create-order`, {
    method: 'POST',
    headers: { authorization: 'Bearer dev-orders-token-change-me', 'content-type': 'application/json' },
    body: JSON.stringify({ sku: 'H-1', qty: 1 }),
  })
  expect(made.status).toBe(201)
  runId = made.headers.get('x-run-id')!
}, 60_000)

afterAll(async () => {
  server?.kill('SIGTERM')
  await server?.catch(() => undefined)
  await cleanupTempDirs()
})

/** Headers that differ between two answers by nature. */
const VOLATILE = new Set(['date', 'content-security-policy', 'set-cookie', 'etag', 'keep-alive', 'connection', 'transfer-encoding'])
const stable = (headers: Headers) => [...headers].filter(([name]) => !VOLATILE.has(name)).sort()

describe('HEAD on every GET route', () => {
  const paths = () => [
    '/',
    '/status',
    '/api/status',
    '/api/events',
    '/docs/shop',
    '/docs/assets/swagger-ui.css',
    '/sign-in',
    '/api/runs/shop',
    `/api/runs/shop/${runId}`,
    '/flows/shop/create-order',
    `/runs/shop/${runId}`,
    '/api/cron/tick',
    '/api/openapi/shop',
  ]

  it('answers with the GET status and headers, and no body', async () => {
    for (const path of paths()) {
      const get = await fetch(`${base}${path}`)
      await get.body?.cancel()
      const head = await fetch(`${base}${path}`, { method: 'HEAD' })
      expect(head.status, path).toBe(get.status)
      expect(stable(head.headers), path).toEqual(stable(get.headers))
      expect(await head.text(), path).toBe('')
    }
  })
})

describe('a known route with another method', () => {
  it.each([
    ['DELETE', '/status', 'GET, HEAD'],
    ['POST', '/api/status', 'GET, HEAD'],
    ['PUT', '/api/events', 'GET, HEAD'],
    ['PATCH', '/', 'GET, HEAD'],
    ['DELETE', '/sign-in', 'GET, HEAD, POST'],
    ['GET', '/sign-out', 'POST'],
    ['GET', '/api/replay/shop/x', 'POST'],
    ['PUT', '/flows/shop/create-order', 'GET, HEAD, POST'],
    ['DELETE', '/api/cron/tick', 'GET, HEAD, POST'],
  ])('%s %s answers 405 with Allow: %s', async (method, path, allow) => {
    const response = await fetch(`${base}${path}`, { method })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe(allow)
    expect(await response.json()).toEqual({ ok: false, errors: ['method not allowed'] })
  })

  it('an unknown path stays 404 for any method', async () => {
    for (const method of ['GET', 'HEAD', 'DELETE']) expect((await fetch(`${base}/no/such/page`, { method })).status).toBe(404)
  })
})
