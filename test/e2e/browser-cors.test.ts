// SPEC §20 "CORS for every call a browser makes", in real Chromium: a page served by a second local
// server (another origin) calls an async flow with an idempotency key and a declared header input
// (the preflight must allow both), reads its 202's X-Run-Id and Location, and reads a header an End
// sets (listed in Access-Control-Expose-Headers). Needs a Chromium (see browser.test.ts).
import { mkdir, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, makeTempDir, startServe } from '../helpers.js'
import { CHROMIUM, launchChromium, noChromiumNotice } from './chromium.js'

noChromiumNotice('browser CORS e2e')

const ASYNC_FLOW = `name: Queue Job
nodes:
  - id: start
    type: start
    name: Start
    method: post
    respond: async
    idempotency: { header: Idempotency-Key, ttlSeconds: 600 }
    inputs:
      headers: { type: object, properties: { x-tenant: { type: string } }, required: [x-tenant] }
      body: { type: object, properties: { n: { type: integer } } }
    next: done
  - { id: done, type: end, name: Done, status: 201, body: { tenant: "{{start.x-tenant}}" } }
`

const SYNC_FLOW = `name: Quote
nodes:
  - { id: start, type: start, name: Start, method: get, next: done }
  - { id: done, type: end, name: Done, headers: { X-Quote-Total: "42" }, body: { ok: true } }
`

describe.skipIf(!CHROMIUM)('CORS for a browser on another origin', () => {
  let server: ResultPromise
  let apiBase: string
  let pageServer: Server
  let pageOrigin: string
  let browser: Browser

  beforeAll(async () => {
    pageServer = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end('<!doctype html><title>caller</title><p>a page on another origin</p>')
    })
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve))
    pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`
    const dir = await makeTempDir('flowctl-cors-')
    await mkdir(join(dir, 'flows'))
    await writeFile(join(dir, 'flowctl.yaml'), `projectId: web\nname: Web\ncors: { origins: ["${pageOrigin}"] }\n`)
    await writeFile(join(dir, 'flows', 'queue-job.yaml'), ASYNC_FLOW)
    await writeFile(join(dir, 'flows', 'quote.yaml'), SYNC_FLOW)
    const started = await startServe([dir, '--quiet', '--no-watch'])
    server = started.child
    apiBase = started.base
    browser = await launchChromium()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    server?.kill('SIGTERM')
    await server
    await new Promise((resolve) => pageServer?.close(resolve))
    await cleanupTempDirs()
  })

  it('an async Start with an idempotency key passes its preflight; X-Run-Id, Location and an End header are readable', async () => {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())))
    await page.goto(pageOrigin)
    const seen = await page.evaluate(async (api) => {
      const call = () =>
        fetch(`${api}/api/run/web/queue-job`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'Idempotency-Key': 'k-1', 'x-tenant': 't1' },
          body: JSON.stringify({ n: 1 }),
        })
      const first = await call()
      const again = await call()
      const quote = await fetch(`${api}/api/run/web/quote`)
      return {
        status: first.status,
        body: (await first.json()) as { runId: string },
        runId: first.headers.get('x-run-id'),
        location: first.headers.get('location'),
        replayed: again.headers.get('idempotent-replayed'),
        againRunId: again.headers.get('x-run-id'),
        quote: quote.status,
        total: quote.headers.get('x-quote-total'),
        quoteRunId: quote.headers.get('x-run-id'),
      }
    }, apiBase)
    expect(errors).toEqual([])
    expect(seen.status).toBe(202)
    expect(seen.runId).toBe(seen.body.runId)
    expect(seen.location).toBe(`/api/result/web/${seen.body.runId}`)
    expect(seen.replayed).toBe('true')
    expect(seen.againRunId).toBe(seen.runId)
    expect(seen.quote).toBe(200)
    expect(seen.total).toBe('42')
    expect(seen.quoteRunId).toMatch(/\w+/)
    await page.close()
  })
})
