// The browser editor (`/edit/<projectId>/<slug>`) in a real Chromium through a real `flowctl serve`
// on a copy of fixtures/example: a change made on the canvas (a node from the palette, connected,
// its form filled with a reference from the picker) and one made in the code view (after a problem
// shown inline) are saved to the file, keep every comment of it, pass `flowctl validate`, and the
// Run API answers with the new behaviour once serve has reloaded the file. Also: the page's access
// rules and policy, the kinds and ports routes, a 409 when the file changed on disk, a new flow.
// Needs a Chromium (as test/e2e/browser.test.ts): FLOWCTL_TEST_CHROMIUM, else /usr/bin/chromium.
import { request } from 'node:http'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, startServe } from '../helpers.js'
import { CHROMIUM, launchChromium, noChromiumNotice } from './chromium.js'

noChromiumNotice('editor browser e2e')

/** Comments added to the copy of quote.yaml: every one must survive the editor's saves. */
const COMMENTS = ['# Prices a basket: kept by the editor', '# the pricing step', '# callers POST a basket', '# the answer is the price node']

function withComments(text: string): string {
  return text
    .replace('name: Quote\n', `${COMMENTS[0]}\nname: Quote\n`)
    .replace('  - id: price\n', `  ${COMMENTS[1]}\n  - id: price\n`)
    .replace('    method: post\n', `    method: post  ${COMMENTS[2]}\n`)
    .replace('    name: Done\n', `    name: Done  ${COMMENTS[3]}\n`)
}

/** A request over loopback that names the server `remote.test`: not a loopback request (SPEC §17's Host rule). */
function remote(port: number, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host: `remote.test:${port}`, ...options.headers } },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

const BASKET = { items: [{ sku: 'A-1', price: 2.5, qty: 2 }], currency: 'EUR' }

describe.skipIf(!CHROMIUM)('the flow editor in a real browser', () => {
  let server: ResultPromise
  let base: string
  let port: number
  let project: string
  let browser: Browser
  let viewerToken: string
  let editorToken: string
  /** quote.yaml as the tests start from it. */
  let BEFORE: string
  const quoteFile = () => join(project, 'flows', 'quote.yaml')

  beforeAll(async () => {
    project = await copyFixture('example')
    BEFORE = withComments(await readFile(quoteFile(), 'utf8'))
    await writeFile(quoteFile(), BEFORE)
    const usersFile = join(project, '.flowctl', 'users.yaml')
    const add = async (name: string, role: string) =>
      JSON.parse((await flowctl(['users', 'add', name, '--grant', `shop=${role}`, '--users', usersFile, '--json'])).stdout).token as string
    viewerToken = await add('vic', 'viewer')
    editorToken = await add('eda', 'editor')
    const started = await startServe([project, '--quiet', '--users', usersFile])
    server = started.child
    base = started.base
    port = started.port
    browser = await launchChromium({ mapRemoteTest: true })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    server?.kill('SIGTERM')
    await server
    await cleanupTempDirs()
  })

  /** The editor for quote, collecting script errors and CSP refusals. */
  async function openEditor(slug = 'quote'): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      // A 409 or 400 the page asked for is logged by Chromium as a failed resource: not a script error.
      if (/Failed to load resource/.test(message.text())) return
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) errors.push(message.text())
    })
    await page.goto(`${base}/edit/shop/${slug}`)
    await page.waitForSelector('.react-flow__node[data-id="start"]', { timeout: 20_000 })
    return { page, errors }
  }

  /**
   * Where a handle is once it has stopped moving: after a change the graph is laid out again and the
   * view may still be fitting itself (an animation, slower on a loaded machine), and a drag that
   * starts from where the handle was a moment ago draws no edge.
   */
  async function settledBox(locator: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
    let box = (await locator.boundingBox())!
    for (let read = 0; read < 30; read++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const next = (await locator.boundingBox())!
      if (next.x === box.x && next.y === box.y && next.width === box.width) return next
      box = next
    }
    return box
  }

  /** Drags from a node's port handle to another node's input handle, as a user does, until the edge is drawn. */
  async function connect(page: Page, from: string, port: string, to: string): Promise<void> {
    const edge = page.locator(`.react-flow__edge[aria-label="edge from ${from} port ${port} to ${to}"]`)
    for (let attempt = 0; attempt < 5 && (await edge.count()) === 0; attempt++) {
      // The graph is laid out again after each change: take the handles where they are now.
      const source = page.locator(`.react-flow__node[data-id="${from}"] .react-flow__handle[data-handleid="${port}"]`)
      const target = page.locator(`.react-flow__node[data-id="${to}"] .react-flow__handle.target`)
      const a = await settledBox(source)
      const b = await settledBox(target)
      await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2)
      await page.mouse.down()
      await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2 + 20, { steps: 5 })
      await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 5 })
      await page.mouse.up()
      await expect
        .poll(() => edge.count(), { timeout: 2_000 })
        .toBe(1)
        .catch(() => undefined)
    }
    expect(await edge.count()).toBe(1)
  }

  async function runQuote(): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${base}/api/run/shop/quote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BASKET) })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }

  /** Serve reloads a written file by itself: wait until the Run API shows `check`. */
  async function untilRunShows(check: (body: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 15_000
    let last: Record<string, unknown> = {}
    while (Date.now() < deadline) {
      last = (await runQuote()).body
      if (check(last)) return last
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    throw new Error(`the Run API never showed the change; last body ${JSON.stringify(last)}`)
  }

  async function expectCommentsKeptAndValid(): Promise<string> {
    const text = await readFile(quoteFile(), 'utf8')
    for (const comment of COMMENTS) expect(text).toContain(comment)
    expect(text).toContain('# yaml-language-server: $schema=')
    const validated = await flowctl(['validate', '--project', project])
    expect(validated.stdout).toMatch(/flows checked: ok \(0 errors/)
    expect(validated.exitCode).toBe(0)
    return text
  }

  it('the page: strict policy, offline assets, no flow text or secret in its HTML, the kinds as JSON', async () => {
    const res = await fetch(`${base}/edit/shop/quote`)
    expect(res.status).toBe(200)
    const policy = res.headers.get('content-security-policy') ?? ''
    expect(policy).toMatch(/default-src 'none'/)
    expect(policy).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic';/)
    expect(policy).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/)
    const page = await res.text()
    expect(page).not.toContain('dev-orders-token-change-me')
    expect(page).not.toContain('{{price}}')
    expect(page).not.toMatch(/https?:\/\/(?!www\.w3\.org)/)
    for (const asset of ['/edit/_assets/editor.js', '/edit/_assets/editor.css', '/edit/_assets/code-view.js']) {
      if (!asset.includes('code-view')) expect(page).toContain(asset)
      const file = await fetch(`${base}${asset}`)
      expect(file.status).toBe(200)
      expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(1000)
    }
    expect((await fetch(`${base}/edit/_assets/..%2Fpackage.json`)).status).toBe(404)
    const kinds = (await (await fetch(`${base}/api/editor/kinds`)).json()) as { kinds: { type: string; description: string; ports: string[] }[]; defs: object }
    expect(kinds.kinds.map((k) => k.type)).toEqual(expect.arrayContaining(['start', 'end', 'if', 'switch', 'set', 'http']))
    expect(kinds.kinds.find((k) => k.type === 'if')).toMatchObject({ ports: ['true', 'false'], description: expect.stringMatching(/condition/) })
    expect(kinds.defs).toHaveProperty('condition')
  })

  it('access: loopback edits; remote needs a signed-in editor (viewer 403, nobody 401); writes are same-origin', async () => {
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
    expect(await remote(port, '/edit/shop/quote')).toBe(401)
    expect(await remote(port, '/edit/shop/quote', { headers: bearer(viewerToken) })).toBe(403)
    expect(await remote(port, '/edit/shop/quote', { headers: bearer(editorToken) })).toBe(200)
    expect(await remote(port, '/edit/shop', { headers: bearer(editorToken) })).toBe(200)
    expect((await fetch(`${base}/edit/nope/quote`)).status).toBe(404)
    expect(await remote(port, '/api/editor/kinds')).toBe(401)
    expect(await remote(port, '/api/editor/kinds', { headers: bearer(viewerToken) })).toBe(200)
    const check = (headers: Record<string, string>) =>
      remote(port, '/api/flows/shop/quote/check', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ text: 'name: x' }),
      })
    expect(await check({ ...bearer(editorToken), origin: 'https://evil.example' })).toBe(403)
    expect(await check({ ...bearer(editorToken), origin: `http://remote.test:${port}` })).toBe(200)
    expect(await check(bearer(viewerToken))).toBe(403)
    expect(await check({})).toBe(401)
  })

  it('the ports route: each node’s ports for its settings; a body that is not { text } is a 400; nothing is written', async () => {
    const post = (body: string) => fetch(`${base}/api/editor/ports`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    const text =
      'name: Q\nnodes:\n  - id: start\n    type: start\n    name: Start\n    next: pick\n  - id: pick\n    type: switch\n    name: Pick\n    value: 1\n    cases: [{ value: 1, port: one }, { value: 2, port: two }]\n    default: other\n  - id: done\n    type: end\n  - id: odd\n    type: nosuchkind\n'
    expect(await (await post(JSON.stringify({ text }))).json()).toEqual({ ports: { start: ['out'], pick: ['one', 'two', 'other'], done: [] } })
    expect(await (await post(JSON.stringify({ text: 'nodes: [' }))).json()).toEqual({ ports: {} })
    expect((await post('{"text": 3}')).status).toBe(400)
    expect((await post('not json')).status).toBe(400)
    expect(await readFile(quoteFile(), 'utf8')).toContain(COMMENTS[1])
  })

  it('canvas: add a node from the palette, connect it, fill its form with a reference, save; the file keeps its comments and the Run API answers anew', async () => {
    const { page, errors } = await openEditor()
    await page.locator('.palette button[data-kind="set"]').click()
    await page.waitForSelector('.react-flow__node[data-id="set"]')
    await page.locator('.react-flow__controls-fitview').click()
    await connect(page, 'price', 'out', 'set')
    await connect(page, 'set', 'out', 'done')
    await expect.poll(() => page.locator('.react-flow__edge').count()).toBe(3)

    // The new node's form (it is selected since it was added): values with a reference from the picker.
    await page.locator('.react-flow__node[data-id="set"]').click()
    const values = page.locator('textarea#setting-values')
    await values.fill('{"greeting": "hi ", "source": "canvas"}')
    await values.click()
    await page.keyboard.press('Control+Home')
    for (let i = 0; i < '{"greeting": "hi '.length; i++) await page.keyboard.press('ArrowRight')
    await page.locator('.refs button[data-ref="price.firstSku"]').waitFor()
    await page.locator('.refs button[data-ref="price.firstSku"]').click()
    expect(await values.inputValue()).toBe('{"greeting": "hi {{ price.firstSku }}", "source": "canvas"}')

    // The End answers with the new node's values beside the price.
    await page.locator('.react-flow__node[data-id="done"]').click()
    await page.locator('textarea#setting-body').fill('{"greeting": "{{ set.greeting }}", "source": "{{ set.source }}", "total": "{{ price.total }}"}')
    // The code view shows the same document, its other lines as written.
    await page.locator('#tab-code').click()
    await expect.poll(() => page.locator('.cm-content').innerText()).toContain('id: set')
    const shown = await page.locator('.cm-content').innerText()
    for (const line of ['    method: post  # callers POST a basket', '        required: [items]']) expect(shown).toContain(line)
    await page.locator('#tab-canvas').click()
    await page.locator('#save').click()
    await expect.poll(() => page.locator('#notice').innerText(), { timeout: 10_000 }).toMatch(/^Saved/)

    const text = await expectCommentsKeptAndValid()
    expect(text).toMatch(/- id: set\n\s+type: set\n\s+name: Set\n/)
    // The flow sent from the canvas changed only its own lines: the rest is byte for byte as written.
    for (const line of [
      '    method: post  # callers POST a basket',
      '        required: [items]',
      '      firstSku: "{{start.items.0.sku}}"',
      BEFORE.split('\n')[3]!,
    ])
      expect(text.split('\n')).toContain(line)
    expect(text).toMatch(/id: price[\s\S]*next: set/)
    const body = await untilRunShows((b) => b.greeting !== undefined)
    expect(body).toEqual({ greeting: 'hi A-1', source: 'canvas', total: 5 })

    // The run panel runs the saved flow and draws its path on the canvas.
    await page.locator('#run-body').fill(JSON.stringify(BASKET))
    await page.locator('#run-button').click()
    await expect
      .poll(
        () =>
          page
            .locator('#run-status')
            .innerText()
            .catch(() => ''),
        { timeout: 10_000 },
      )
      .toBe('HTTP 200')
    for (const id of ['start', 'price', 'set', 'done']) expect(await page.locator(`.react-flow__node[data-id="${id}"] .fc-node.passed`).count()).toBe(1)
    expect(await page.locator('.react-flow__edge.taken').count()).toBe(3)
    expect(errors).toEqual([])
    await page.close()
  }, 90_000)

  it('code: a problem is shown inline before saving; the fixed text is saved with its comments and runs', async () => {
    const { page, errors } = await openEditor()
    await page.locator('#tab-code').click()
    // Both views show one document: the canvas's saved change is in the text.
    await expect.poll(() => page.locator('.cm-content').innerText()).toContain('id: set')
    const typeLine = page.locator('.cm-line', { hasText: /^\s*type: set$/ }).first()
    await typeLine.click()
    await page.keyboard.press('End')
    await page.keyboard.type('x')
    // The server's problem, inline (underlined) and in the list, before any save.
    await page.locator('.cm-lintRange-error').first().waitFor({ timeout: 10_000 })
    await expect.poll(() => page.locator('#problems').innerText()).toContain('"setx" is not a node type')
    // The canvas marks the node the problem is in.
    await page.locator('#tab-canvas').click()
    await expect.poll(() => page.locator('.react-flow__node[data-id="price"] .fc-node.problem').count()).toBe(1)
    expect(await page.locator('.fc-node.problem').count()).toBe(1)
    await page.locator('#tab-code').click()
    await page
      .locator('.cm-line', { hasText: /^\s*type: setx$/ })
      .first()
      .click()
    await page.keyboard.press('End')
    await page.keyboard.press('Backspace')
    await expect.poll(() => page.locator('#problems li').count(), { timeout: 10_000 }).toBe(0)

    // A real change: one more value in the price node, typed after its last value.
    await page.locator('.cm-line', { hasText: 'total: "{{=' }).click()
    await page.keyboard.press('End')
    await page.keyboard.press('Enter')
    await page.keyboard.type('note: typed in code')
    // Switching views keeps the edit (the canvas's form shows it).
    await page.locator('#tab-canvas').click()
    await page.locator('.react-flow__node[data-id="price"]').click()
    expect(await page.locator('textarea#setting-values').inputValue()).toMatch(/"note": "typed in code"/)
    await page.locator('#tab-code').click()
    await page.locator('#save').click()
    await expect.poll(() => page.locator('#notice').innerText(), { timeout: 10_000 }).toMatch(/^Saved/)

    const text = await expectCommentsKeptAndValid()
    expect(text).toMatch(/total: "\{\{= .*\}\}"\n\s+note: typed in code\n/)
    // The End now answers set's values; the price's new value is seen through a run's trace.
    const res = await fetch(`${base}/api/run/shop/quote?_trace=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(BASKET),
    })
    const traced = (await res.json()) as { trace: { steps: { nodeId: string; output: Record<string, unknown> }[] } }
    const deadline = Date.now() + 15_000
    let note = traced.trace.steps.find((s) => s.nodeId === 'price')?.output.note
    while (note === undefined && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const again = (await (
        await fetch(`${base}/api/run/shop/quote?_trace=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BASKET) })
      ).json()) as typeof traced
      note = again.trace.steps.find((s) => s.nodeId === 'price')?.output.note
    }
    expect(note).toBe('typed in code')
    expect(errors).toEqual([])
    await page.close()
  }, 90_000)

  it('a file changed on disk since the editor loaded it: Save shows the conflict and writes nothing', async () => {
    const { page, errors } = await openEditor()
    const onDisk = (await readFile(quoteFile(), 'utf8')).replace('# the pricing step', '# the pricing step, changed elsewhere')
    await writeFile(quoteFile(), onDisk)
    await page.locator('.react-flow__node[data-id="price"]').click()
    await page.locator('#setting-name').fill('Price Two')
    await page.locator('#save').click()
    await expect.poll(() => page.locator('#notice').innerText(), { timeout: 10_000 }).toContain('the file changed on disk')
    expect(await readFile(quoteFile(), 'utf8')).toBe(onDisk)
    await page.locator('#take-disk').click()
    expect(await page.locator('.react-flow__node[data-id="price"]').innerText()).toMatch(/Price$/)
    await page.locator('#tab-code').click()
    await expect.poll(() => page.locator('.cm-content').innerText()).toContain('changed elsewhere')
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it('a new flow: /edit/<projectId> starts from a Start and an End; Save creates the file, and it runs', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${base}/edit/shop`)
    await page.waitForSelector('.react-flow__node[data-id="done"]', { timeout: 20_000 })
    await page.locator('#save').click()
    await page.waitForURL(`${base}/edit/shop/new-flow`, { timeout: 10_000 })
    const text = await readFile(join(project, 'flows', 'new-flow.yaml'), 'utf8')
    expect(text).toMatch(/name: New Flow/)
    const deadline = Date.now() + 15_000
    let status = 0
    while (status !== 200 && Date.now() < deadline) {
      status = (await fetch(`${base}/api/run/shop/new-flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(status).toBe(200)
    // Saving the same name again is refused: the slug is taken.
    await page.goto(`${base}/edit/shop`)
    await page.waitForSelector('.react-flow__node[data-id="done"]', { timeout: 20_000 })
    await page.locator('#save').click()
    await expect.poll(() => page.locator('#notice').innerText(), { timeout: 10_000 }).toMatch(/Not created \(HTTP 409\)/)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it('renaming a node in its form: the save rewrites the references to it, and the flow answers as before', async () => {
    const { page, errors } = await openEditor()
    await page.locator('.react-flow__node[data-id="price"]').click()
    await page.locator('#setting-name').fill('Pricing')
    // Until the save, the references name a node that no longer exists: the check says so.
    await expect.poll(() => page.locator('#problems').innerText(), { timeout: 10_000 }).toMatch(/price/)
    await page.locator('#save').click()
    await expect.poll(() => page.locator('#notice').innerText(), { timeout: 10_000 }).toMatch(/^Saved\.$/)
    const text = await expectCommentsKeptAndValid()
    expect(text).toContain('name: Pricing')
    expect(text).toContain('{{ pricing.firstSku }}')
    expect(text).not.toMatch(/\{\{\s*price[.}\s]/)
    const body = await untilRunShows(() => true)
    expect(body).toMatchObject({ greeting: 'hi A-1', source: 'canvas', total: 5 })
    // The editor shows the text as saved: the code view has the rewritten references.
    await page.locator('#tab-code').click()
    await expect.poll(() => page.locator('.cm-content').innerText()).toContain('{{ pricing.total }}')
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it('from another host name: an editor signed in with the form edits through the cookie; a viewer is refused', async () => {
    const remoteBase = `http://remote.test:${port}`
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const signIn = async (token: string) => {
      await page.goto(`${remoteBase}/sign-in`)
      await page.locator('#token').fill(token)
      await page.locator('form button[type=submit]').click()
      await page.waitForURL(`${remoteBase}/`)
    }
    await signIn(viewerToken)
    expect((await page.goto(`${remoteBase}/edit/shop/quote`))?.status()).toBe(403)
    expect(await page.locator('main').innerText()).toContain('editor or owner role')
    await signIn(editorToken)
    await page.goto(`${remoteBase}/edit/shop/quote`)
    // The page's reads (kinds, the flow file) and the check go with the sign-in cookie.
    await page.waitForSelector('.react-flow__node[data-id="price"]', { timeout: 20_000 })
    expect(await page.locator('.palette button[data-kind]').count()).toBeGreaterThan(5)
    await page.locator('.react-flow__node[data-id="price"]').click()
    await page.locator('#setting-description').fill('Priced remotely')
    await page.locator('#save').click()
    await expect.poll(() => page.locator('#notice').innerText(), { timeout: 10_000 }).toMatch(/^Saved/)
    expect(await readFile(quoteFile(), 'utf8')).toContain('description: Priced remotely')
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)
})
