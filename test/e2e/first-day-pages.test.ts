// SPEC §21 (the first day), end to end against the real `flowctl serve`: a failed http step shows
// its method, URL (secrets masked), status and the first 2 KiB of the answer on the run page, in
// `flowctl history show` and in alerts; pictures show retries and the flows call/each run; a run
// whose End answered 5xx gets an amber `answered 503` badge; /status lists no route for `http: false`;
// replays link both ways; a 400 for an enum lists the allowed values; a `.env` reload that leaves a
// Start's secret unset is logged. Pages are also opened in Chromium when it is installed (screenshots
// go to FLOWCTL_TEST_OUTPUT or test-output/screenshots/first-day-*.png).
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, eventually, flowctl, makeTempDir, ROOT, startServe, type StartedServe } from '../helpers.js'
import { CHROMIUM, launchChromium } from './chromium.js'

const SHOTS = resolve(process.env.FLOWCTL_TEST_OUTPUT ?? join(ROOT, 'test-output'), 'screenshots')

const UPSTREAM_KEY = 'sk-live-9f8e7d6c5b4a'
const TOKEN = 'tok-first-day-42'
/** The upstream's error page: longer than 2 KiB, so the stored body is its beginning. */
const UPSTREAM_BODY = `upstream down for maintenance <b>back soon</b> ${'x'.repeat(3000)} END-OF-BODY`

function flowFiles(upstream: string): Record<string, string> {
  return {
    'fetch-price.yaml': `name: Fetch Price
nodes:
  - id: start
    type: start
    name: Start
    method: post
    auth: { type: bearer, token: "\${secrets.ORDERS_TOKEN}" }
    inputs:
      body: { type: object, required: [size], properties: { size: { enum: [s, m, l] } } }
    next: price
  - id: price
    type: http
    name: Price
    url: "${upstream}/price?key=\${secrets.UPSTREAM_KEY}"
    failOnStatus: true
    retry: { attempts: 3, delayMs: 0 }
    next: done
  - { id: done, type: end, name: Done, body: { price: "{{price.body}}" } }
`,
    'quote-all.yaml': `name: Quote All
nodes:
  - { id: start, type: start, name: Start, method: post, next: quote }
  - { id: quote, type: call, name: Quote, flow: fetch-price, input: { size: m }, next: done }
  - { id: done, type: end, name: Done }
`,
    'closed.yaml': `name: Closed
nodes:
  - { id: start, type: start, name: Start, method: get, next: done }
  - { id: done, type: end, name: Done, status: 503, body: { error: closed for the day } }
`,
    'nightly.yaml': `name: Nightly
nodes:
  - { id: start, type: start, name: Start, http: false, next: done }
  - { id: done, type: end, name: Done }
`,
  }
}

describe('the first day: failed http steps, honest badges and pictures, clearer messages', () => {
  let upstream: Server
  let upstreamUrl: string
  let dir: string
  let serve: StartedServe
  let failedRunId: string
  let nestedRunId: string
  let closedRunId: string

  beforeAll(async () => {
    upstream = createServer((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/html' })
      response.end(UPSTREAM_BODY)
    })
    await new Promise<void>((ready) => upstream.listen(0, '127.0.0.1', ready))
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
    dir = await makeTempDir('flowctl-first-day-')
    await mkdir(join(dir, 'flows'))
    await writeFile(
      join(dir, 'flowctl.yaml'),
      `projectId: day
name: Day One
notify:
  channels:
    local: { type: file, path: .flowctl/outbox }
  alerts: [{ flows: ["*"], channel: local }]
`,
    )
    await writeFile(join(dir, '.env'), `ORDERS_TOKEN=${TOKEN}\nUPSTREAM_KEY=${UPSTREAM_KEY}\n`)
    for (const [name, text] of Object.entries(flowFiles(upstreamUrl))) await writeFile(join(dir, 'flows', name), text)
    // A first tick starts the alert rule's cursor, so the failures below are alerted by the next one.
    expect((await flowctl(['tick', '--project', dir])).exitCode).toBe(0)
    serve = await startServe([dir])
  }, 60_000)

  afterAll(async () => {
    serve?.child.kill('SIGTERM')
    await serve?.child
    await new Promise((done) => upstream?.close(done))
    await cleanupTempDirs()
  })

  const run = (slug: string, body?: unknown) =>
    body === undefined
      ? fetch(`${serve.base}/api/run/day/${slug}`, { headers: { authorization: `Bearer ${TOKEN}` } })
      : fetch(`${serve.base}/api/run/day/${slug}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
  const page = async (path: string) => {
    const response = await fetch(`${serve.base}${path}`)
    expect(response.status).toBe(200)
    return response.text()
  }

  it('a 400 for an enum lists the allowed values', async () => {
    const response = await run('fetch-price', { size: 'xl' })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ ok: false, errors: ['body/size: must be one of "s", "m", "l"'] })
  })

  it('a failed http step is recorded with its method, masked URL, status and the first 2 KiB of the answer', async () => {
    const response = await run('fetch-price', { size: 'm' })
    expect(response.status).toBe(500)
    failedRunId = ((await response.json()) as { runId: string }).runId
    const records = (await (await fetch(`${serve.base}/api/runs/day?flow=fetch-price`)).json()) as { id: string; status: string }[]
    expect(records.find((record) => record.id === failedRunId)?.status).toBe('error')

    const shown = await flowctl(['history', 'show', failedRunId, '--project', dir])
    expect(shown.exitCode).toBe(0)
    expect(shown.stdout).toContain(`http call    GET ${upstreamUrl}/price?key=*** answered 503`)
    expect(shown.stdout).toContain('answer body (first 2 KiB)')
    expect(shown.stdout).toContain('upstream down for maintenance <b>back soon</b>')
    expect(shown.stdout).not.toContain('END-OF-BODY')
    expect(shown.stdout).not.toContain(UPSTREAM_KEY)
    const json = JSON.parse((await flowctl(['history', 'show', failedRunId, '--project', dir, '--json'])).stdout)
    const steps = json.trace.steps as { nodeId: string; attempt?: number; output: { http?: { body: string } } }[]
    expect(steps.map((step) => [step.nodeId, step.attempt])).toEqual([
      ['start', undefined],
      ['price', 1],
      ['price', 2],
      ['price', 3],
    ])
    const http = steps[3]!.output.http as unknown as { method: string; url: string; status: number; body: string }
    expect(http).toMatchObject({ method: 'GET', url: `${upstreamUrl}/price?key=***`, status: 503 })
    expect(Buffer.byteLength(http.body.slice(0, http.body.indexOf('… [')))).toBe(2048)
    expect(http.body).toMatch(/… \[\d+ more bytes\]$/)

    const html = await page(`/runs/day/${failedRunId}`)
    expect(html).toContain(`<code>GET ${upstreamUrl}/price?key=***</code>`)
    expect(html).toContain('upstream down for maintenance &lt;b&gt;back soon&lt;/b&gt;')
    expect(html).not.toContain(UPSTREAM_KEY)
    // Attempts are numbered; the first two were tried again.
    expect(html).toMatch(/data-attempt="1"[^]*tried again[^]*data-attempt="3"/)
    // The picture shows the retry.
    expect(html).toContain('>×3</text>')
  })

  it('a failure inside a called flow is nested under its call step, and the graph links the called flow', async () => {
    const response = await run('quote-all', {})
    expect(response.status).toBe(500)
    nestedRunId = ((await response.json()) as { runId: string }).runId
    const html = await page(`/runs/day/${nestedRunId}`)
    expect(html).toContain('<a class="calls" href="/flows/day/fetch-price">')
    expect(html).toMatch(/<details class="sub-flow" open><summary>flow <a href="\/flows\/day\/fetch-price">fetch-price<\/a>/)
    expect(html).toContain('(node <code>price</code> of flow fetch-price)')
    const shown = await flowctl(['history', 'show', nestedRunId, '--project', dir])
    expect(shown.stdout).toContain(`http call    GET ${upstreamUrl}/price?key=*** answered 503 (node price of flow fetch-price)`)
    expect(await page('/flows/day/quote-all')).toContain('CALL → fetch-price')
  })

  it('alerts name the failed call, its status and the start of its answer', async () => {
    expect((await flowctl(['tick', '--project', dir])).exitCode).toBe(0)
    const outbox = join(dir, '.flowctl', 'outbox')
    const files = await readdir(outbox)
    const messages = await Promise.all(files.map(async (file) => JSON.parse(await readFile(join(outbox, file), 'utf8'))))
    const alert = messages.find((message) => message.kind === 'alert' || message.payload?.kind === 'alert')
    const payload = alert.payload ?? alert
    expect(payload.text).toContain(`GET ${upstreamUrl}/price?key=*** answered 503`)
    expect(payload.text).toContain('answer body (first 2 KiB): upstream down for maintenance')
    expect(JSON.stringify(payload)).not.toContain(UPSTREAM_KEY)
    const failure = payload.failures.find((f: { runId: string }) => f.runId === failedRunId)
    expect(failure.http).toMatchObject({ method: 'GET', status: 503 })
  })

  it('a run whose End answered 503 gets an amber badge, not a green success', async () => {
    const response = await run('closed')
    expect(response.status).toBe(503)
    closedRunId = response.headers.get('x-run-id')!
    const badge = '<span class="badge warn">answered 503</span>'
    expect(await page(`/runs/day/${closedRunId}`)).toContain(badge)
    const dashboard = await page('/')
    expect(dashboard).toContain(badge)
    expect(dashboard).not.toContain('success 503')
    expect(await page('/flows/day/closed')).toContain(badge)
    expect(await page('/status')).toContain(badge)
  })

  it('/status lists no route for an http: false flow', async () => {
    const status = await page('/status')
    expect(status).not.toContain('/api/run/day/nightly')
    expect(status).toContain('none (http: false)')
    const json = (await (await fetch(`${serve.base}/api/status`)).json()) as { projects: { flows: { slug: string; method: string | null }[] }[] }
    expect(json.projects[0]!.flows.find((flow) => flow.slug === 'nightly')).toMatchObject({ method: null, path: null, http: false, start: true })
  })

  it('a replayed run links to its replays, and each replay back', async () => {
    const replayed = await fetch(`${serve.base}/api/replay/day/${closedRunId}`, { method: 'POST' })
    const replayId = replayed.headers.get('x-run-id')!
    expect(replayId).toBeTruthy()
    const original = await page(`/runs/day/${closedRunId}`)
    expect(original).toContain(`<dt>Replayed by</dt><dd id="replays"><a href="/runs/day/${replayId}"><code>${replayId}</code></a>`)
    expect(await page(`/runs/day/${replayId}`)).toContain(`<a href="/runs/day/${closedRunId}" id="replay-of">`)
  })

  describe.skipIf(!CHROMIUM)('in Chromium', () => {
    it('the run page, dashboard and flow page render what the tests above read', async () => {
      await mkdir(SHOTS, { recursive: true })
      const browser = await launchChromium()
      try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
        const tab = await context.newPage()
        const errors: string[] = []
        tab.on('pageerror', (error) => errors.push(error.message))
        await tab.goto(`${serve.base}/runs/day/${failedRunId}`)
        await expect(tab.locator('#failed-http').textContent()).resolves.toContain(`GET ${upstreamUrl}/price?key=***`)
        expect(await tab.locator('li[data-attempt]').count()).toBe(3)
        await tab.screenshot({ path: join(SHOTS, 'first-day-failed-http.png'), fullPage: true })
        await tab.goto(`${serve.base}/runs/day/${nestedRunId}`)
        expect(await tab.locator('details.sub-flow[open] li.failed').count()).toBe(1)
        await tab.screenshot({ path: join(SHOTS, 'first-day-nested.png'), fullPage: true })
        await tab.goto(`${serve.base}/`)
        await expect(tab.locator('.badge.warn').first().textContent()).resolves.toBe('answered 503')
        // Amber, not green: the badge's colour is the warning one.
        expect(
          await tab
            .locator('.badge.warn')
            .first()
            .evaluate((node) => getComputedStyle(node).color),
        ).toBe('rgb(138, 90, 0)')
        await tab.screenshot({ path: join(SHOTS, 'first-day-dashboard.png'), fullPage: true })
        await tab.goto(`${serve.base}/flows/day/quote-all`)
        await tab.locator('a.calls').click()
        await tab.waitForURL(`${serve.base}/flows/day/fetch-price`)
        await tab.screenshot({ path: join(SHOTS, 'first-day-called-flow.png'), fullPage: true })
        expect(errors).toEqual([])
      } finally {
        await browser.close()
      }
    }, 60_000)
  })

  it('a .env reload that leaves a Start secret unset says the flow refuses every request', async () => {
    await writeFile(join(dir, '.env'), `UPSTREAM_KEY=${UPSTREAM_KEY}\n`)
    const refusing = 'day: flow fetch-price refuses every request (401) until secret ORDERS_TOKEN is set'
    await eventually(async () => serve.output().includes(refusing), 15_000)
    expect((await run('fetch-price', { size: 's' })).status).toBe(401)
    await writeFile(join(dir, '.env'), `ORDERS_TOKEN=${TOKEN}\nUPSTREAM_KEY=${UPSTREAM_KEY}\n`)
    await eventually(async () => serve.output().includes('day: flow fetch-price accepts requests again'), 15_000)
    expect(serve.output().match(/refuses every request/g)).toHaveLength(1)
  }, 40_000)
})
