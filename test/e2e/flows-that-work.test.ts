// End-to-end, SPEC §9 and §13: the real `flowctl serve` on SQLite and on PostgreSQL runs the example's
// expression, retry/error-branch and each flows, plus call, wait and a runaway expression.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, startServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

const TOKEN = 'dev-orders-token-change-me'

const EXTRA_FLOWS: Record<string, string> = {
  'call-and-wait.yaml': `
name: Call And Wait
nodes:
  - { id: start, type: start, name: Start, inputs: { body: { type: object, properties: { price: { type: number } } } }, next: nap }
  - { id: nap, type: wait, name: Nap, ms: 20, next: priced }
  - { id: priced, type: call, name: Priced, flow: quote, input: { items: [{ sku: one, price: "{{ start.price }}", qty: 3 }] }, next: done }
  - { id: done, type: end, name: Done, body: { total: "{{ priced.body.total }}", waited: "{{= nap.waitedMs >= 20 }}" } }
`,
  'runaway.yaml': `
name: Runaway
nodes:
  - { id: start, type: start, name: Start, next: spin }
  - { id: spin, type: set, name: Spin, values: { v: "{{= ($f := function($n){ $f($n + 1) }; $f(0)) }}" }, next: done }
  - { id: done, type: end, name: Done }
`,
}

/** The stock service the example's Stock Check calls: records the paths it sees; sku "down" answers 503. */
async function startStockService(): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = []
  const server: Server = createServer((request, response) => {
    paths.push(request.url ?? '')
    const sku = decodeURIComponent((request.url ?? '').split('?')[0]!.split('/').pop() ?? '')
    if (sku === 'down') return response.writeHead(503).end()
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ available: sku.length }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

pgSkipNotice('expressions, retries and sub-flows through serve')

const stores: [string, boolean][] = [
  ['SQLite', true],
  ['PostgreSQL', Boolean(PG_URL)],
]

for (const [storeName, enabled] of stores) {
  // Skipped without FLOWCTL_TEST_DATABASE_URL for PostgreSQL (notice printed above).
  describe.skipIf(!enabled)(`expressions, retries and sub-flows through serve on ${storeName}`, () => {
    let project: string
    let base: string
    let server: ResultPromise
    let stock: Awaited<ReturnType<typeof startStockService>>
    let db: { url: string; drop: () => Promise<void> } | null = null
    const env: Record<string, string> = {}

    beforeAll(async () => {
      stock = await startStockService()
      env.FLOWCTL_SECRET_STOCK_API_URL = stock.url
      if (storeName === 'PostgreSQL') {
        db = await createTestDatabase()
        env.FLOWCTL_DATABASE_URL = db.url
      }
      project = await copyFixture('example')
      for (const [name, text] of Object.entries(EXTRA_FLOWS)) await writeFile(join(project, 'flows', name), text)
      const started = await startServe([project, '--host', '127.0.0.1', '--quiet', '--no-watch'], { env })
      server = started.child
      base = started.base
    })

    afterAll(async () => {
      server?.kill('SIGTERM')
      await server?.catch(() => undefined)
      await stock?.close()
      await db?.drop()
      await cleanupTempDirs()
    })

    const post = (slug: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}/api/run/shop/${slug}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

    it('Quote totals its basket with an expression', async () => {
      const response = await post('quote', {
        items: [
          { sku: 'a', price: 2.5, qty: 2 },
          { sku: 'b', price: 0.1, qty: 3 },
        ],
      })
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ firstSku: 'a', total: 5.3 })
    })

    it('Bulk Quote runs Quote once per basket, in order', async () => {
      const response = await post('bulk-quote', { baskets: [{ items: [{ sku: 'a', price: 1, qty: 2 }] }, { items: [] }, { items: [{ sku: 'c', price: 4 }] }] })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ totals: [2, null, 4], failed: 1 })
    })

    it('Stock Check: bearer auth, the sku one encoded path segment, the query encoded', async () => {
      expect((await fetch(`${base}/api/run/shop/stock-check/abc`)).status).toBe(401)
      const auth = { authorization: `Bearer ${TOKEN}` }
      const response = await fetch(`${base}/api/run/shop/stock-check/..%2Fadmin?warehouse=${encodeURIComponent('b&x=1')}`, { headers: auth })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ sku: '../admin', available: true, count: 8 })
      expect(stock.paths.at(-1)).toBe('/stock/..%2Fadmin?warehouse=b%26x%3D1')
    })

    it('Stock Check: a service that stays down is retried, then the error branch answers 503', async () => {
      const response = await fetch(`${base}/api/run/shop/stock-check/down?_trace=1`, { headers: { authorization: `Bearer ${TOKEN}` } })
      const traced = (await response.json()) as {
        response: { status: number; body: unknown }
        trace: { steps: { nodeId: string; attempt?: number; port: string | null }[] }
      }
      expect(traced.response).toEqual({ status: 503, body: { sku: 'down', error: 'HTTP GET request answered 503 Service Unavailable', attempts: 3 } })
      expect(traced.trace.steps.filter((step) => step.nodeId === 'lookup').map((step) => [step.attempt, step.port])).toEqual([
        [1, null],
        [2, null],
        [3, 'error'],
      ])
      const runId = response.headers.get('x-run-id')
      const shown = await flowctl(['history', 'show', String(runId), '--project', project, '--json'], { env })
      expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'success', httpStatus: 503, ports: [{ nodeId: 'lookup', port: 'error' }] })
    })

    it('call and wait', async () => {
      const response = await post('call-and-wait', { price: 1.5 })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ total: 4.5, waited: true })
    })

    it('a runaway expression fails its node with "expression timed out", recorded in history', async () => {
      const response = await post('runaway', {})
      expect(response.status).toBe(500)
      expect(await response.json()).toMatchObject({ ok: false, errors: ['node spin failed'], nodeId: 'spin' })
      const shown = await flowctl(['history', 'show', String(response.headers.get('x-run-id')), '--project', project, '--json'], { env })
      expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'error', failedNodeId: 'spin', error: 'expression timed out' })
      // The server is still answering.
      expect((await post('quote', { items: [{ sku: 'z', price: 1 }] })).status).toBe(200)
    })
  })
}
