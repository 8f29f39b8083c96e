// The pages of SPEC §14 in a real browser (Chromium via playwright-core) against the real `flowctl
// serve` on the example project: the dashboard's flow pictures, running a flow from the generated
// form, the new run appearing on an open dashboard through /api/events, the run inspector's
// highlighted path and failed node, replay, and /docs on loopback without a prompt. A screenshot of
// each page goes to test-output/screenshots/ (FLOWCTL_TEST_OUTPUT overrides the folder).
// The browser also reaches the server as `remote.test` (mapped to 127.0.0.1): a non-loopback Host.
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { ResultPromise } from 'execa'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, EXAMPLE_FLOW_SLUGS, flowctl, ROOT, startServe } from '../helpers.js'
import { CHROMIUM, launchChromium, noChromiumNotice } from './chromium.js'

noChromiumNotice('dashboard browser e2e')
const SHOTS = resolve(process.env.FLOWCTL_TEST_OUTPUT ?? join(ROOT, 'test-output'), 'screenshots')
const FLOWS = EXAMPLE_FLOW_SLUGS

describe.skipIf(!CHROMIUM)('dashboard, flow page, run inspector and replay in a real browser', () => {
  let server: ResultPromise
  let base: string
  let remoteBase: string
  let browser: Browser
  let viewerToken: string
  let editorToken: string
  const dialogs: string[] = []

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true })
    const project = await copyFixture('example')
    const usersFile = join(project, '.flowctl', 'users.yaml')
    viewerToken = JSON.parse((await flowctl(['users', 'add', 'vera', '--grant', 'shop=viewer', '--users', usersFile, '--json'])).stdout).token
    editorToken = JSON.parse((await flowctl(['users', 'add', 'eddie', '--grant', 'shop=editor', '--users', usersFile, '--json'])).stdout).token
    const started = await startServe([project, '--quiet', '--no-watch', '--users', usersFile])
    server = started.child
    base = started.base
    remoteBase = `http://remote.test:${started.port}`
    browser = await launchChromium({ mapRemoteTest: true })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    server?.kill('SIGTERM')
    await server
    await cleanupTempDirs()
  })

  async function openPage(options: { headers?: Record<string, string> } = {}): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, extraHTTPHeaders: options.headers })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    return { page, errors }
  }

  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
  }

  let dashboard: Page
  let dashboardErrors: string[]
  let formRunId = ''

  it('/ shows every flow with a picture of its graph', async () => {
    ;({ page: dashboard, errors: dashboardErrors } = await openPage())
    await dashboard.goto(`${base}/`)
    for (const slug of FLOWS) {
      const card = dashboard.locator(`[data-flow-card="${slug}"]`)
      await expect(card.count()).resolves.toBe(1)
      expect(await card.locator('svg.flow-graph g.node').count()).toBeGreaterThanOrEqual(2)
      expect(await card.locator('svg.flow-graph g.edge').count()).toBeGreaterThanOrEqual(1)
    }
    // A schedule-only flow shows no route, an HTTP flow its method and path.
    expect(await dashboard.locator('[data-flow-card="nightly-cleanup"]').innerText()).toContain('no HTTP route (http: false)')
    expect(await dashboard.locator('[data-flow-card="create-order"]').innerText()).toContain('POST /api/run/shop/create-order')
    // Kind and name on the picture: create-order has two insert nodes named Result and Big Result.
    const names = await dashboard.locator('[data-flow-card="create-order"] svg text.name').allTextContents()
    expect(names).toEqual(expect.arrayContaining(['Start', 'Big Order', 'Result', 'Big Result']))
    await dashboard.waitForFunction(() => document.getElementById('live-state')?.textContent === '● live', null, { timeout: 10_000 })
    await shot(dashboard, 'dashboard')
    expect(dashboardErrors).toEqual([])
  })

  it('runs a flow from the form generated from its Start, showing the answer and the trace', async () => {
    const { page, errors } = await openPage()
    await page.goto(`${base}/flows/shop/create-order`)
    expect(await page.locator('svg.flow-graph g.port text').allTextContents()).toEqual(expect.arrayContaining(['true', 'false']))
    expect(await page.locator('#f-headers\\.x-tenant').getAttribute('placeholder')).toBe('default "default"')
    await page.locator('#f-headers\\.x-tenant').fill('t-42')
    await page.locator('#body-editor').fill('{"sku":"BROWSER-1","qty":3}')
    await expect(page.locator('#body-state').innerText()).resolves.toContain('valid JSON')
    await page.locator('#run-form button[type=submit]').click()
    await page.locator('#run-result .badge', { hasText: 'HTTP 201' }).waitFor({ timeout: 10_000 })
    const steps = await page.locator('#run-result ol.steps li .step-head').allInnerTexts()
    expect(steps.map((s) => s.split(' (')[0])).toEqual(['Start', 'Big Order', 'Result', 'Done'])
    expect(await page.locator('#run-result').innerText()).toContain('t-42')
    formRunId = (await page.locator('#run-result a code').innerText()).trim()
    expect(formRunId).toMatch(/^[0-9a-z]{32}$/)
    await shot(page, 'flow-form')
    expect(errors).toEqual([])
    await page.context().close()
  })

  it('shows the new run on the open dashboard without reloading it (SSE)', async () => {
    const row = dashboard.locator('tbody[data-runs="shop"] tr', { hasText: formRunId })
    await row.waitFor({ timeout: 10_000 })
    // Still the same document: the marker set before survives only if the page was not reloaded.
    expect(await dashboard.evaluate(() => performance.getEntriesByType('navigation').length)).toBe(1)
    expect(await dashboard.locator('[data-last-run="shop/create-order"]').innerText()).toContain('just now')
    await shot(dashboard, 'dashboard-live')
    expect(dashboardErrors).toEqual([])
  })

  it('opens the run and sees the path highlighted; a failed run marks its node', async () => {
    const { page, errors } = await openPage()
    await page.goto(`${base}/`)
    await page.locator(`a[href="/runs/shop/${formRunId}"]`).first().click()
    await page.waitForURL(`**/runs/shop/${formRunId}`)
    const visited = await page.locator('svg.flow-graph g.node.visited').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-node')))
    expect(visited.sort()).toEqual(['check', 'done', 'save', 'start'])
    expect(await page.locator('svg.flow-graph g.node.skipped').count()).toBe(2)
    const taken = await page
      .locator('svg.flow-graph g.edge.taken')
      .evaluateAll((edges) => edges.map((e) => `${e.getAttribute('data-from')}:${e.getAttribute('data-port')}`))
    expect(taken.sort()).toEqual(['check:false', 'save:out', 'start:out'])
    expect(await page.locator('#run-input').innerText()).toContain('BROWSER-1')
    await shot(page, 'run')

    // A failing run (nothing listens on port 1): the http node is marked as failed.
    const failed = await fetch(`${base}/api/run/shop/fetch-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer dev-orders-token-change-me' },
      body: JSON.stringify({ url: 'http://127.0.0.1:1/' }),
    })
    expect(failed.status).toBe(500)
    const failedId = failed.headers.get('x-run-id')!
    await page.goto(`${base}/runs/shop/${failedId}`)
    expect(await page.locator('svg.flow-graph g.node.failed').getAttribute('data-node')).toBe('call')
    expect(await page.locator('svg.flow-graph g.node.failed text.kind').textContent()).toBe('HTTP · FAILED')
    expect(await page.locator('dl.facts').innerText()).toMatch(/Failed node\s+call/)
    await shot(page, 'run-failed')
    expect(errors).toEqual([])
    await page.context().close()
  })

  it('replays the run: a new run with the same input, linked to the first', async () => {
    const { page, errors } = await openPage()
    await page.goto(`${base}/runs/shop/${formRunId}`)
    await page.locator('#replay').click()
    await page.waitForURL((url) => url.pathname.startsWith('/runs/shop/') && !url.pathname.endsWith(formRunId))
    const facts = await page.locator('dl.facts').innerText()
    expect(facts).toContain(`Replay of\n${formRunId}`)
    expect(await page.locator('#run-input').innerText()).toContain('BROWSER-1')
    expect(await page.locator('svg.flow-graph g.node.visited').count()).toBe(4)
    await shot(page, 'replay')
    expect(errors).toEqual([])
    await page.context().close()
  })

  it('/docs/shop on loopback shows the operations without asking for a token', async () => {
    const before = dialogs.length
    const { page, errors } = await openPage()
    await page.goto(`${base}/docs/shop`)
    await page.waitForSelector('.opblock', { timeout: 20_000 })
    expect(await page.locator('.opblock-summary-path').allInnerTexts()).toEqual(expect.arrayContaining(['/api/run/shop/create-order']))
    expect(dialogs.length).toBe(before)
    await shot(page, 'docs')
    expect(errors).toEqual([])
    await page.context().close()
  }, 40_000)

  it('from another host name: a viewer reads the pages but gets no run form or Replay button; nobody else sees projects', async () => {
    const anonymous = await openPage()
    await anonymous.page.goto(`${remoteBase}/`)
    expect(await anonymous.page.locator('main').innerText()).toContain('with a user token (from flowctl users add) to see projects')
    expect(await anonymous.page.locator('[data-flow-card]').count()).toBe(0)
    // Signing in with the form keeps the token in a cookie: the dashboard then shows the projects.
    await anonymous.page.locator('main a[href="/sign-in"]').click()
    await anonymous.page.locator('#token').fill(viewerToken)
    await anonymous.page.locator('form button[type=submit]').click()
    await anonymous.page.waitForURL(`${remoteBase}/`)
    expect(await anonymous.page.locator('[data-flow-card]').count()).toBe(FLOWS.length)
    await anonymous.page.context().close()

    const { page } = await openPage({ headers: { authorization: `Bearer ${viewerToken}` } })
    await page.goto(`${remoteBase}/`)
    expect(await page.locator('[data-flow-card]').count()).toBe(FLOWS.length)
    await page.goto(`${remoteBase}/flows/shop/create-order`)
    expect(await page.locator('#run-form').count()).toBe(0)
    expect(await page.locator('main').innerText()).toContain('needs the editor or owner role')
    await page.goto(`${remoteBase}/runs/shop/${formRunId}`)
    expect(await page.locator('#replay').count()).toBe(0)
    await page.context().close()
  })

  it('links to the browser editor only for those who may edit: loopback and an editor, not a viewer', async () => {
    const editLinks = (page: Page) => page.locator('main a[href^="/edit/"]')
    const loopback = await openPage()
    await loopback.page.goto(`${base}/`)
    // One per flow card, and "New flow" per project.
    expect(await editLinks(loopback.page).count()).toBe(FLOWS.length + 1)
    await loopback.page.goto(`${base}/flows/shop/create-order`)
    expect(await editLinks(loopback.page).getAttribute('href')).toBe('/edit/shop/create-order')
    await loopback.page.context().close()

    const editor = await openPage({ headers: { authorization: `Bearer ${editorToken}` } })
    await editor.page.goto(`${remoteBase}/`)
    expect(await editLinks(editor.page).count()).toBe(FLOWS.length + 1)
    await editor.page.goto(`${remoteBase}/flows/shop/create-order`)
    await editor.page.locator('main a', { hasText: 'Edit in the browser' }).click()
    await editor.page.waitForURL(`${remoteBase}/edit/shop/create-order`)
    expect(await editor.page.title()).toContain('Edit create-order')
    await editor.page.context().close()

    const viewer = await openPage({ headers: { authorization: `Bearer ${viewerToken}` } })
    await viewer.page.goto(`${remoteBase}/`)
    expect(await viewer.page.locator('[data-flow-card]').count()).toBe(FLOWS.length)
    expect(await editLinks(viewer.page).count()).toBe(0)
    await shot(viewer.page, 'dashboard-viewer')
    await viewer.page.goto(`${remoteBase}/flows/shop/create-order`)
    expect(await editLinks(viewer.page).count()).toBe(0)
    expect(await viewer.page.locator('dl.facts').innerText()).toContain('flows/create-order.yaml')
    await shot(viewer.page, 'flow-viewer')
    // The editor itself still refuses a viewer who types its address.
    expect((await viewer.page.goto(`${remoteBase}/edit/shop/create-order`))?.status()).toBe(403)
    expect(viewer.errors.filter((e) => !e.includes('403'))).toEqual([])
    await viewer.page.context().close()
  })
})
