// SPEC §20 "Live events resume", the page side, in real Chromium: a dashboard open while its server
// restarts reconnects with the Last-Event-ID of the old process, gets one `reset`, and reloads its run
// lists, so a run recorded while it was reconnecting (by `flowctl run`, into the same store) shows.
// Needs a Chromium (see browser.test.ts).
import type { ResultPromise } from 'execa'
import type { Browser } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, spawnFlowctl, startServe, waitForServer } from '../helpers.js'
import { CHROMIUM, launchChromium, noChromiumNotice } from './chromium.js'

noChromiumNotice('browser events reset e2e')

const children: ResultPromise[] = []
let browser: Browser | undefined

afterAll(async () => {
  await browser?.close()
  for (const child of children) {
    child.kill('SIGTERM')
    await child.catch(() => undefined)
  }
  await cleanupTempDirs()
})

describe.skipIf(!CHROMIUM)('a dashboard across a server restart', () => {
  it('gets a reset and reloads its run list: a run made meanwhile appears', async () => {
    const dir = await copyFixture('example')
    const first = await startServe([dir, '--quiet', '--no-watch'])
    children.push(first.child)
    browser = await launchChromium()
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${first.base}/`)
    await page.waitForFunction(() => document.getElementById('live-state')?.textContent === '● live', null, { timeout: 10_000 })
    // One live run, so the page's EventSource holds an id of this process.
    const made = await fetch(`${first.base}/api/run/shop/create-order`, {
      method: 'POST',
      headers: { authorization: 'Bearer dev-orders-token-change-me', 'content-type': 'application/json' },
      body: JSON.stringify({ sku: 'R-1', qty: 1 }),
    })
    const liveId = made.headers.get('x-run-id')!
    await page.locator('tbody[data-runs="shop"] tr', { hasText: liveId }).first().waitFor({ timeout: 10_000 })

    first.child.kill('SIGTERM')
    await first.child.catch(() => undefined)
    await page.waitForFunction(() => document.getElementById('live-state')?.textContent !== '● live', null, { timeout: 10_000 })
    // Recorded while the page is reconnecting: no live event will ever carry it.
    const cli = await flowctl(['run', 'create-order', '--project', dir, '--body', '{"sku":"R-2","qty":2}', '--json'])
    expect(cli.exitCode, cli.stderr).toBe(0)
    const missedId = (JSON.parse(cli.stdout) as { runId: string }).runId

    const second = spawnFlowctl(['serve', dir, '--quiet', '--no-watch', '--port', String(first.port)])
    children.push(second)
    await waitForServer(`${first.base}/api/status`)
    await page.locator('tbody[data-runs="shop"] tr', { hasText: missedId }).first().waitFor({ timeout: 15_000 })
    expect(await page.locator('tbody[data-runs="shop"] tr', { hasText: liveId }).count()).toBeGreaterThan(0)
    expect(errors).toEqual([])
  }, 90_000)
})
