// The approval page of a callback wait (SPEC §22) in a real Chromium: GET on the resume URL shows
// the run's input and its steps so far; Approve (with a comment) posts `{ approved: true, comment }`
// and the run finishes with it. The run page of the waiting run shows its status and resume link
// (loopback). Screenshots go to FLOWCTL_SCREENSHOTS (when set) for a person to look at.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, eventually, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { CHROMIUM, launchChromium } from './chromium.js'

const SHOTS = process.env.FLOWCTL_SCREENSHOTS

const FLOW = `name: Expense
nodes:
  - id: start
    type: start
    name: Start
    method: post
    respond: async
    inputs:
      body: { type: object, properties: { amount: { type: number }, who: { type: string } } }
    next: ask
  - { id: ask, type: set, name: Ask, values: { amount: "{{start.amount}}", link: "{{run.resumeUrl}}" }, next: wait }
  - { id: wait, type: wait, name: Decision, until: callback, next: { out: done, timeout: done } }
  - { id: done, type: end, name: Done, body: { approved: "{{decision.body.approved}}", comment: "{{decision.body.comment}}" } }
`

describe.skipIf(!CHROMIUM)('approval page in Chromium', () => {
  let serve: StartedServe
  let browser: Browser

  beforeAll(async () => {
    const dir = await makeTempDir('flowctl-approval-')
    await mkdir(join(dir, 'flows'))
    await writeFile(join(dir, 'flowctl.yaml'), 'projectId: office\nname: Office\nlimits: { runsPerMinutePerIp: 0 }\n')
    await writeFile(join(dir, 'flows', 'expense.yaml'), FLOW)
    serve = await startServe([dir, '--quiet', '--no-watch'])
    browser = await launchChromium()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    serve?.child.kill('SIGTERM')
    await serve?.child.catch(() => undefined)
    await cleanupTempDirs()
  })

  it('shows input and steps, and Approve finishes the run with { approved, comment }', async () => {
    const started = await fetch(`${serve.base}/api/run/office/expense`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 120.5, who: 'ada' }),
    })
    const { runId } = (await started.json()) as { runId: string }
    let run: { status: string; trace: { steps: { nodeId: string; output: { link?: string } }[] } } | null = null
    await eventually(async () => (run = (await (await fetch(`${serve.base}/api/runs/office/${runId}`)).json()) as typeof run)?.status === 'waiting', 15_000, 50)
    // The stored trace shows the link's token masked (a credential); the run page gives it to loopback callers.
    expect(run!.trace.steps.find((step) => step.nodeId === 'ask')!.output.link).toMatch(/token=\*\*\*$/)

    const errors: string[] = []
    const page = await browser.newPage()
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) errors.push(message.text())
    })

    // The run page of the waiting run: its status, and (on loopback) the resume link.
    await page.goto(`${serve.base}/runs/office/${runId}`)
    expect(await page.textContent('h1')).toContain('waiting')
    const href = (await page.getAttribute('#resume-link', 'href'))!
    expect(href).toMatch(new RegExp(`^/api/resume/office/${runId}\\?token=[\\w-]{43}$`))
    const url = `${serve.base}${href}`
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'run-page-waiting.png'), fullPage: true })

    await page.goto(url)
    expect(await page.textContent('h1')).toContain('Approval: Expense')
    expect(await page.textContent('#approval-input')).toContain('120.5')
    expect(await page.textContent('#approval-steps')).toContain('Ask')
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'approval-page.png'), fullPage: true })
    await page.fill('#comment', 'within budget')
    await page.click('button[value="true"]')
    await page.waitForSelector('h1')
    expect(await page.textContent('h1')).toBe('Thank you')
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'approval-sent.png'), fullPage: true })

    const result = async () =>
      (await (await fetch(`${serve.base}/api/result/office/${runId}`)).json()) as { status: string; response: { body: unknown } | null }
    await eventually(async () => (await result()).status === 'success', 15_000, 50)
    expect((await result()).response!.body).toEqual({ approved: true, comment: 'within budget' })

    // The link used once: the page now says so, and offers no buttons.
    await page.goto(url)
    expect(await page.textContent('.banner')).toContain('answered already')
    expect(await page.$('button[value="true"]')).toBeNull()
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it('the flow page shows a run live when it parks (waiting) and turns that row into the final one', async () => {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${serve.base}/flows/office/expense`)
    await page.waitForFunction(() => document.getElementById('live-state')?.textContent === '● live', null, { timeout: 10_000 })
    const started = await fetch(`${serve.base}/api/run/office/expense`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 7, who: 'bo' }),
    })
    const { runId } = (await started.json()) as { runId: string }
    const rows = page.locator(`tbody[data-runs="office"] tr[data-run="${runId}"]`)
    // Sent on /api/events when it parks: a row of its own, marked waiting.
    await rows.locator('.badge', { hasText: 'waiting' }).waitFor({ timeout: 15_000 })

    // The loopback run page holds the resume link; approving ends the run, whose row turns success.
    const runPage = await (await fetch(`${serve.base}/runs/office/${runId}`)).text()
    const href = /id="resume-link" href="([^"]+)"/.exec(runPage)![1]!.replaceAll('&amp;', '&')
    const resumed = await fetch(`${serve.base}${href}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"approved":true}' })
    expect(resumed.status).toBe(202)
    await rows.locator('.badge', { hasText: 'success' }).waitFor({ timeout: 15_000 })
    expect(await rows.count()).toBe(1)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})
