// /status and /docs in a real browser (Chromium driven by playwright-core): the pages render, the
// docs page asks a non-loopback visitor for a user token (the browser reaches the server as
// `remote.test`, mapped to 127.0.0.1: a loopback socket but not a loopback Host), lists the
// project's operations, and "Try it out" runs a flow against the live server. Needs a Chromium: FLOWCTL_TEST_CHROMIUM, else /usr/bin/chromium
// (Debian's package; .ci/run installs it). Without one the suite prints a notice and skips.
import type { ResultPromise } from 'execa'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { cleanupTempDirs, copyFixture, flowctl, startServe } from '../helpers.js'
import { CHROMIUM, launchChromium, noChromiumNotice } from './chromium.js'

noChromiumNotice('browser e2e')

describe.skipIf(!CHROMIUM)('/status and /docs in a real browser', () => {
  let server: ResultPromise
  let base: string
  let remoteBase: string
  let browser: Browser
  let userToken: string

  beforeAll(async () => {
    const project = await copyFixture('example')
    const usersFile = join(project, '.flowctl', 'users.yaml')
    const added = await flowctl(['users', 'add', 'ada', '--grant', 'shop=viewer', '--users', usersFile, '--json'])
    userToken = JSON.parse(added.stdout).token
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

  /** A page that collects script errors and CSP refusals, answering the token prompt with `token`. */
  async function openPage(token = ''): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) errors.push(message.text())
    })
    page.on('dialog', (dialog) => void dialog.accept(token))
    return { page, errors }
  }

  it('/docs sends the strict CSP (scripts by nonce only) and Swagger UI renders under it on loopback', async () => {
    const { page, errors } = await openPage()
    const response = await page.goto(`${base}/docs/shop`)
    const policy = response?.headers()['content-security-policy'] ?? ''
    expect(policy).toMatch(/default-src 'none'/)
    expect(policy).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]+';/)
    expect(policy).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/)
    expect(policy).toMatch(/frame-ancestors 'none'/)
    await page.waitForSelector('.opblock', { timeout: 20_000 })
    // An inline script without the nonce is refused: the policy is in force, not only sent.
    const ran = await page.evaluate(async () => {
      const script = document.createElement('script')
      script.textContent = 'window.__injected = true'
      document.body.appendChild(script)
      await new Promise((resolve) => setTimeout(resolve, 50))
      return (window as unknown as { __injected?: boolean }).__injected === true
    })
    expect(ran).toBe(false)
    expect(errors.filter((e) => !/__injected|inline script/i.test(e))).toEqual([])
    await page.close()
  }, 60_000)

  it('/status shows the project, its flows and a run just made', async () => {
    const res = await fetch(`${base}/api/run/shop/create-order`, {
      method: 'POST',
      headers: { authorization: 'Bearer dev-orders-token-change-me', 'content-type': 'application/json' },
      body: JSON.stringify({ sku: 'B-7', qty: 2 }),
    })
    expect(await res.json()).toMatchObject({ ok: true })
    expect(res.status).toBe(201)
    const { page, errors } = await openPage()
    await page.goto(`${base}/status`)
    await expect(page.locator('h2', { hasText: 'Shop API' }).count()).resolves.toBe(1)
    const text = await page.locator('body').innerText()
    expect(text).toContain('POST /api/run/shop/create-order')
    expect(text).toContain('nightly-cleanup')
    expect(text).toMatch(/create-order\s+POST\s+success\s+201/)
    expect(errors).toEqual([])
    await page.close()
  })

  it('/docs asks for a user token, lists the operations and runs a flow with "Try it out"', async () => {
    const { page, errors } = await openPage(userToken)
    let asked = false
    page.on('dialog', () => void (asked = true))
    await page.goto(`${remoteBase}/docs/shop`)
    await page.waitForSelector('.opblock', { timeout: 20_000 })
    const paths = await page.locator('.opblock-summary-path').allInnerTexts()
    expect(paths).toEqual(expect.arrayContaining(['/api/run/shop/create-order', '/api/run/shop/quote', '/api/run/shop/order-status/{state}']))

    const op = page.locator('.opblock-post', { hasText: '/api/run/shop/create-order' })
    await op.locator('.opblock-summary').click()
    await op.locator('button.try-out__btn').click()
    await op.locator('textarea.body-param__text').fill('{"sku":"A-1","qty":3}')
    await page.locator('button.authorize').first().click()
    await page.locator('.modal-ux input').first().fill('dev-orders-token-change-me')
    await page.locator('.modal-ux button.authorize').first().click()
    await page.locator('.modal-ux button.btn-done').first().click()
    await op.locator('button.execute').click()
    const status = op.locator('.live-responses-table .response .response-col_status')
    await status.first().waitFor({ timeout: 10_000 })
    expect((await status.first().innerText()).trim()).toBe('201')
    const body = JSON.parse(await op.locator('.live-responses-table .response .microlight').first().innerText())
    expect(body).toEqual({ id: expect.stringMatching(/^[0-9a-f]{24}$/), ok: true })
    expect(asked).toBe(true)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it('/docs with a wrong token says the document could not be loaded', async () => {
    const { page } = await openPage('flowctl_not-a-real-token')
    await page.goto(`${remoteBase}/docs/shop`)
    await page.waitForFunction(() => /HTTP 401/.test(document.getElementById('token-status')?.textContent ?? ''), null, { timeout: 10_000 })
    expect(await page.locator('.opblock').count()).toBe(0)
    await page.close()
  })
})
