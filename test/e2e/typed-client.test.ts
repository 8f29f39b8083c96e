// The OpenAPI document is true, not only valid: a client generated from what `serve` publishes
// (openapi-typescript + openapi-fetch) type-checks and calls the running server successfully,
// and a call with the wrong body shape does NOT type-check. SPEC §20: the answers third-party
// tools found missing (an onError End's 503, polling /api/result, objects of unknown keys, a body
// bound to an optional input) are typed from the document and match what the server answers.
import { execa } from 'execa'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, freePort, makeTempDir, ROOT, startServe } from '../helpers.js'

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const TSC_FLAGS = ['--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext']

const CLIENT = `
import createClient from 'openapi-fetch'
import type { paths } from './api.js'

const client = createClient<paths>({ baseUrl: process.argv[2] })
const order = await client.POST('/api/run/shop/create-order', {
  body: { sku: 'TYPED', qty: 2 },
  params: { header: { 'x-tenant': 'acme' } },
  headers: { authorization: 'Bearer dev-orders-token-change-me' },
})
const orderId: string | undefined = order.data?.id
const state = await client.GET('/api/run/shop/order-status/{state}', { params: { path: { state: 'open' }, query: { verbose: true } } })
const message: string | undefined = state.data?.message
const quote = await client.POST('/api/run/shop/quote', { body: { items: [{ sku: 'X', price: 2 }], currency: 'USD' } })
const label: string | undefined = quote.data?.label
const invalid = await client.POST('/api/run/shop/quote', { body: { items: [] } })
const errors: string[] | undefined = invalid.error?.errors
console.log(JSON.stringify({
  order: { status: order.response.status, id: orderId },
  state: { status: state.response.status, message },
  quote: { status: quote.response.status, label },
  invalid: { status: invalid.response.status, errors },
}))
`

const WRONG_CLIENT = `
import createClient from 'openapi-fetch'
import type { paths } from './api.js'
const client = createClient<paths>({ baseUrl: 'http://localhost' })
await client.POST('/api/run/shop/create-order', { body: { sku: 42, qty: 'two' } })
`

// Typed calls the document did not describe before SPEC §20; each line below failed to compile then.
const COMPLETE_CLIENT = `
import createClient from 'openapi-fetch'
import type { paths } from './api.js'

type HasNull<T> = null extends T ? true : false
const client = createClient<paths>({ baseUrl: process.argv[2] })
const auth = { authorization: 'Bearer dev-orders-token-change-me' }

// The stock service is down: the flow's onError End answers 503 with its own body.
const stock = await client.GET('/api/run/shop/stock-check/{sku}', { params: { path: { sku: 'A-1' } }, headers: auth })
const failure = stock.error
const reason: string | null | undefined = failure && 'attempts' in failure ? failure.error : undefined
const attempts: number | null | undefined = failure && 'attempts' in failure ? failure.attempts : undefined

// A basket is { type: object } without properties: any keys may be sent.
const bulk = await client.POST('/api/run/shop/bulk-quote', { body: { baskets: [{ items: [{ sku: 'X', price: 2 }], currency: 'USD' }] } })
const failed: number | undefined = bulk.data?.failed

// The End binds an optional input: the document says it may be null, and it is.
const echo = await client.POST('/api/run/shop/echo-note', { body: {} })
const noteMayBeNull: HasNull<NonNullable<typeof echo.data>['note']> = true

// An async Start: poll its result through the documented operation.
const queued = await client.POST('/api/run/shop/queued-echo', { body: { word: 'hi' }, headers: auth })
const runId: string = queued.data!.runId
let result = await client.GET('/api/result/shop/{runId}', { params: { path: { runId } }, headers: auth })
for (let polls = 0; polls < 400 && (result.data?.status === 'queued' || result.data?.status === 'running'); polls++) {
  await new Promise((resolve) => setTimeout(resolve, 25))
  result = await client.GET('/api/result/shop/{runId}', { params: { path: { runId } }, headers: auth })
}
const status: 'queued' | 'running' | 'success' | 'error' | undefined = result.data?.status
const answer: { status: number; body: unknown } | null | undefined = result.data?.response
const anonymous = await client.GET('/api/result/shop/{runId}', { params: { path: { runId } } })
const refused: string[] | undefined = anonymous.error?.errors

console.log(JSON.stringify({
  stock: { status: stock.response.status, reason, attempts },
  bulk: { status: bulk.response.status, failed },
  echo: { status: echo.response.status, body: echo.data, noteMayBeNull },
  queued: { status: queued.response.status, runId },
  result: { status, answer },
  anonymous: { status: anonymous.response.status, refused },
}))
`

/** Flows added to the copied example for the SPEC §20 client: an optional input bound by an End, and an async Start. */
const EXTRA_FLOWS: Record<string, string> = {
  'echo-note.yaml': `name: Echo Note
nodes:
  - id: start
    type: start
    name: Start
    summary: Echo a note
    operationId: echoNote
    inputs:
      body: { type: object, properties: { note: { type: string } } }
    next: done
  - id: done
    type: end
    name: Done
    body: { note: "{{ start.note }}" }
    schema: { type: object, properties: { note: { type: string } } }
`,
  'queued-echo.yaml': `name: Queued Echo
nodes:
  - id: start
    type: start
    name: Start
    summary: Echo a word in the background
    operationId: queueEcho
    respond: async
    auth: { type: bearer, token: "\${secrets.ORDERS_TOKEN}" }
    inputs:
      body: { type: object, required: [word], properties: { word: { type: string } } }
    next: done
  - id: done
    type: end
    name: Done
    status: 201
    body: { echoed: "{{ start.word }}" }
    schema: { type: object, properties: { echoed: { type: string } } }
`,
}

async function compileClient(work: string, document: unknown, file: string, source: string): Promise<void> {
  await writeFile(join(work, 'api.d.ts'), astToString(await openapiTS(document as Parameters<typeof openapiTS>[0])))
  await writeFile(join(work, file), source)
  const compiled = await execa('node', [TSC, ...TSC_FLAGS, '--outDir', 'out', file], { cwd: work, reject: false })
  expect(compiled.stdout + compiled.stderr).toBe('')
  expect(compiled.exitCode).toBe(0)
}

describe('a client generated from the published OpenAPI document', () => {
  let project: string
  let work: string
  let base: string
  let token: string
  let server: ResultPromise

  beforeAll(async () => {
    project = await copyFixture('example')
    for (const [name, text] of Object.entries(EXTRA_FLOWS)) await writeFile(join(project, 'flows', name), text)
    work = await makeTempDir('flowctl-client-')
    const added = await flowctl(['users', 'add', 'ci', '--grant', 'shop=viewer', '--json'], { cwd: work })
    token = JSON.parse(added.stdout).token
    // The stock service of stock-check is down: nothing listens on its port.
    const env = { FLOWCTL_SECRET_STOCK_API_URL: `http://127.0.0.1:${await freePort()}` }
    const started = await startServe([project, '--quiet', '--no-watch', '--users', join(work, '.flowctl', 'users.yaml')], { env })
    server = started.child
    base = started.base
  })

  afterAll(async () => {
    server.kill('SIGTERM')
    await server
    await cleanupTempDirs()
  })

  it('type-checks and calls the running server', async () => {
    const response = await fetch(`${base}/api/openapi/shop`, { headers: { authorization: `Bearer ${token}` } })
    expect(response.status).toBe(200)
    const document = await response.json()
    expect(document.servers[0].url).toBe(base)

    await writeFile(join(work, 'api.d.ts'), astToString(await openapiTS(document)))
    await writeFile(join(work, 'client.ts'), CLIENT)
    await writeFile(join(work, 'wrong.ts'), WRONG_CLIENT)
    await writeFile(join(work, 'package.json'), '{ "type": "module" }\n')
    await symlink(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir')
    await mkdir(join(work, 'out'))

    const compiled = await execa('node', [TSC, ...TSC_FLAGS, '--outDir', 'out', 'client.ts'], { cwd: work, reject: false })
    expect(compiled.stdout + compiled.stderr).toBe('')
    expect(compiled.exitCode).toBe(0)

    const wrong = await execa('node', [TSC, ...TSC_FLAGS, '--noEmit', 'wrong.ts'], { cwd: work, reject: false })
    expect(wrong.exitCode).not.toBe(0)
    expect(wrong.stdout).toMatch(/wrong\.ts\(\d+,\d+\): error TS2322/)

    const ran = await execa('node', [join(work, 'out', 'client.js'), base], { cwd: work, reject: false })
    expect(ran.stderr).toBe('')
    const results = JSON.parse(ran.stdout)
    expect(results.order).toEqual({ status: 201, id: expect.any(String) })
    expect(results.state).toEqual({ status: 200, message: 'Order is open' })
    expect(results.quote).toEqual({ status: 200, label: 'Quote for X in USD' })
    expect(results.invalid.status).toBe(400)
    expect(results.invalid.errors).toEqual(['body/items: must NOT have fewer than 1 items'])
    expect(await readFile(join(work, 'api.d.ts'), 'utf8')).toContain('"/api/run/shop/create-order"')
    // Two tsc runs: 10–35 s on a busy shared 2-core machine, over vitest's 30 s default.
  }, 120_000)

  it('types the onError 503, objects of unknown keys, nullable bindings and polling /api/result (SPEC §20)', async () => {
    const response = await fetch(`${base}/api/openapi/shop`, { headers: { authorization: `Bearer ${token}` } })
    expect(response.status).toBe(200)
    const dir = join(work, 'complete')
    await mkdir(join(dir, 'out'), { recursive: true })
    await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n')
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
    await compileClient(dir, await response.json(), 'complete.ts', COMPLETE_CLIENT)

    const ran = await execa('node', [join(dir, 'out', 'complete.js'), base], { cwd: dir, reject: false })
    expect(ran.stderr).toBe('')
    const results = JSON.parse(ran.stdout)
    expect(results.stock).toEqual({ status: 503, reason: expect.stringMatching(/./), attempts: 3 })
    expect(results.bulk).toEqual({ status: 200, failed: 0 })
    expect(results.echo).toEqual({ status: 200, body: { note: null }, noteMayBeNull: true })
    expect(results.queued).toEqual({ status: 202, runId: expect.any(String) })
    expect(results.result).toEqual({ status: 'success', answer: { status: 201, body: { echoed: 'hi' } } })
    expect(results.anonymous).toEqual({ status: 401, refused: [expect.any(String)] })
  }, 120_000)
})
