// End-to-end retry from the failed step: the real `flowctl serve` (SQLite, and PostgreSQL when
// FLOWCTL_TEST_DATABASE_URL is set), the real CLI and, on SQLite, Chromium clicking the run page's
// "Retry from failed node" button. A counting upstream answers the flow's first call and fails its
// later check once: after the retry, the first call was made once in total (no second call, no
// second insert) and the new record has replayOf and resumedFrom. The button's screenshot is saved
// under FLOWCTL_TEST_SCREENSHOTS (default /work/notes) when that folder exists.
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, startServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'
import { CHROMIUM, launchChromium } from './chromium.js'

const SCREENSHOTS = process.env.FLOWCTL_TEST_SCREENSHOTS ?? '/work/notes'

/** Counts requests per path: `/count/<key>` answers `{ n }`; `/flip/<key>` answers 500 the first time, then 200. */
async function startUpstream(): Promise<{ url: string; hits: Map<string, number>; close(): Promise<void> }> {
  const hits = new Map<string, number>()
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!
    const n = (hits.get(path) ?? 0) + 1
    hits.set(path, n)
    const status = path.startsWith('/flip/') && n === 1 ? 500 : 200
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ n }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

const retryFlow = (url: string) => `name: Retryable
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { key: { type: string } }, required: [key] } }, next: fetch }
  - { id: fetch, type: http, name: Fetch, method: get, url: "${url}/count/{{start.key}}", next: save }
  - { id: save, type: insert, name: Save, collection: retried, document: { key: "{{start.key}}", n: "{{fetch.body.n}}" }, next: check }
  - { id: check, type: http, name: Check, method: get, url: "${url}/flip/{{start.key}}", failOnStatus: true, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { id: "{{save.insertedId}}", fetched: "{{fetch.body.n}}", checked: "{{check.body.n}}" } }
`

pgSkipNotice('retry from the failed step through serve')

const stores: [string, boolean][] = [
  ['SQLite', true],
  ['PostgreSQL', Boolean(PG_URL)],
]

for (const [storeName, enabled] of stores) {
  describe.skipIf(!enabled)(`retry from the failed step through serve and the CLI on ${storeName}`, () => {
    let project: string
    let base: string
    let server: ResultPromise
    let upstream: Awaited<ReturnType<typeof startUpstream>>
    let db: { url: string; drop: () => Promise<void> } | null = null
    const env: Record<string, string> = {}

    beforeAll(async () => {
      upstream = await startUpstream()
      if (storeName === 'PostgreSQL') {
        db = await createTestDatabase()
        env.FLOWCTL_DATABASE_URL = db.url
      }
      project = await copyFixture('example')
      await writeFile(join(project, 'flows', 'retryable.yaml'), retryFlow(upstream.url))
      const started = await startServe([project, '--host', '127.0.0.1', '--quiet', '--no-watch'], { env })
      server = started.child
      base = started.base
    }, 60_000)

    afterAll(async () => {
      server?.kill('SIGTERM')
      await server?.catch(() => undefined)
      await upstream?.close()
      await db?.drop()
      await cleanupTempDirs()
    })

    const post = (path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })

    it('POST /api/replay/shop/<id>?from=failed: the call and the insert before the failed node happened once', async () => {
      const failed = await post('/api/run/shop/retryable', { key: 'api' })
      expect(failed.status).toBe(500)
      const runId = failed.headers.get('x-run-id')!
      expect(upstream.hits.get('/count/api')).toBe(1)

      const retried = await post(`/api/replay/shop/${runId}?from=failed`)
      expect(retried.status).toBe(201)
      const answer = (await retried.json()) as { runId: string; response: { body: { id: string } } }
      expect(answer).toMatchObject({ replayOf: runId, resumedFrom: 'check', response: { status: 201, body: { fetched: 1, checked: 2 } } })
      expect(upstream.hits.get('/count/api')).toBe(1)
      expect(upstream.hits.get('/flip/api')).toBe(2)

      const record = (await (await fetch(`${base}/api/runs/shop/${answer.runId}`)).json()) as Record<string, unknown>
      expect(record).toMatchObject({ replayOf: runId, resumedFrom: 'check', status: 'success', httpStatus: 201 })
      // One document: the failed run's insert, whose id the retry answered with.
      const documents = await flowctl(['documents', 'retried', '--filter', '{"key":"api"}', '--project', project, '--json'], { env })
      expect(documents.stdout).toContain(answer.response.body.id)
      expect((JSON.parse(documents.stdout) as { documents: unknown[] }).documents).toHaveLength(1)
    }, 60_000)

    it('flowctl run --retry-failed RUNID, and flowctl history --json shows resumedFrom', async () => {
      const failed = await flowctl(['run', 'retryable', '--project', project, '--body', '{"key":"cli"}', '--json'], { env })
      expect(failed.exitCode).toBe(1)
      const failedRun = JSON.parse(failed.stdout) as { runId: string; body: { nodeId: string } }
      expect(failedRun.body.nodeId).toBe('check')
      expect(upstream.hits.get('/count/cli')).toBe(1)

      const retried = await flowctl(['run', '--retry-failed', failedRun.runId, '--project', project, '--json'], { env })
      expect(retried.exitCode, retried.stderr).toBe(0)
      const answer = JSON.parse(retried.stdout) as { runId: string }
      expect(answer).toMatchObject({ status: 201, replayOf: failedRun.runId, resumedFrom: 'check', body: { fetched: 1, checked: 2 } })
      expect(upstream.hits.get('/count/cli')).toBe(1)

      const history = await flowctl(['history', '--project', project, '--flow', 'retryable', '--json'], { env })
      const records = JSON.parse(history.stdout) as { id: string; resumedFrom: string | null; replayOf: string | null }[]
      expect(records.find((r) => r.id === answer.runId)).toMatchObject({ replayOf: failedRun.runId, resumedFrom: 'check' })
      expect(records.find((r) => r.id === failedRun.runId)).toMatchObject({ replayOf: null, resumedFrom: null })

      // The human form says what was reused; a second retry of a run that passed is refused (exit 1).
      const shown = await flowctl(['history', 'show', answer.runId, '--project', project], { env: { ...env, NO_COLOR: '1' } })
      expect(shown.stdout).toMatch(/resumed from {1,}check/)
      expect(shown.stdout.match(/ reused$/gm)).toHaveLength(2)
      const refused = await flowctl(['run', '--retry-failed', answer.runId, '--project', project], { env })
      expect(refused.exitCode).toBe(1)
      expect(refused.stderr).toContain('did not fail')
      const both = await flowctl(['run', '--retry-failed', answer.runId, '--replay', answer.runId, '--project', project], { env })
      expect(both.exitCode).toBe(2)
    }, 60_000)

    describe.skipIf(!CHROMIUM || storeName !== 'SQLite')('the run page in Chromium', () => {
      let browser: Browser

      beforeAll(async () => {
        browser = await launchChromium()
      }, 60_000)

      afterAll(async () => {
        await browser?.close()
      })

      it('"Retry from failed node" makes the new run and shows it; the earlier steps were not executed again', async () => {
        const failed = await post('/api/run/shop/retryable', { key: 'page' })
        expect(failed.status).toBe(500)
        const runId = failed.headers.get('x-run-id')!
        const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } })
        await page.goto(`${base}/runs/shop/${runId}`)
        const button = page.locator('#retry-failed')
        expect(await button.textContent()).toBe('Retry from failed node')
        if (existsSync(SCREENSHOTS)) await page.screenshot({ path: join(SCREENSHOTS, 'retry-failed-button.png'), fullPage: true })
        await Promise.all([page.waitForURL((url) => url.pathname !== `/runs/shop/${runId}`), button.click()])
        const newRunId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
        expect(newRunId).not.toBe(runId)
        expect(await page.locator('#resumed-from').textContent()).toContain('check')
        expect(await page.locator('#replay-of').textContent()).toBe(runId)
        expect(await page.locator('#run-steps li', { hasText: 'reused from the failed run' }).count()).toBe(2)
        if (existsSync(SCREENSHOTS)) await page.screenshot({ path: join(SCREENSHOTS, 'retry-failed-new-run.png'), fullPage: true })
        expect(upstream.hits.get('/count/page')).toBe(1)
        const record = (await (await fetch(`${base}/api/runs/shop/${newRunId}`)).json()) as Record<string, unknown>
        expect(record).toMatchObject({ replayOf: runId, resumedFrom: 'check', status: 'success' })

        // Back on the failed run, then replayed as a whole: its page tells the retry from the replay.
        await page.goto(`${base}/runs/shop/${runId}`)
        expect(await page.locator('#retries').textContent()).toContain(newRunId)
        expect(await page.locator('#replays').count()).toBe(0)
        await Promise.all([page.waitForURL((url) => url.pathname !== `/runs/shop/${runId}`), page.locator('#replay').click()])
        const replayId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
        expect(await page.locator('dl.facts').innerText()).toContain(`Replay of\n${runId}`)
        await page.goto(`${base}/runs/shop/${runId}`)
        const facts = await page.locator('dl.facts').innerText()
        expect(facts).toContain(`Retried by\n${newRunId} success 201\nReplayed by\n${replayId} success 201\n`)
        if (existsSync(SCREENSHOTS)) await page.screenshot({ path: join(SCREENSHOTS, 'retried-and-replayed.png'), fullPage: true })
        // The dashboard's last runs badge the replay and the retry each by its name.
        await page.goto(`${base}/`)
        expect(await page.locator(`tr:has(a[href$="${replayId}"]) .badge.info`).textContent()).toBe('replay')
        expect(await page.locator(`tr:has(a[href$="${newRunId}"]) .badge.info`).textContent()).toBe('retry')
        if (existsSync(SCREENSHOTS)) await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-retry-and-replay.png'), fullPage: true })
        await page.close()
      }, 60_000)
    })
  })
}
