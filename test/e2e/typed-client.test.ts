// The OpenAPI document is true, not only valid: a client generated from what `serve` publishes
// (openapi-typescript + openapi-fetch) type-checks and calls the running server successfully,
// and a call with the wrong body shape does NOT type-check.
import { execa } from 'execa'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, makeTempDir, ROOT, startServe } from '../helpers.js'

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

describe('a client generated from the published OpenAPI document', () => {
  let project: string
  let work: string
  let base: string
  let token: string
  let server: ResultPromise

  beforeAll(async () => {
    project = await copyFixture('example')
    work = await makeTempDir('flowctl-client-')
    const added = await flowctl(['users', 'add', 'ci', '--grant', 'shop=viewer', '--json'], { cwd: work })
    token = JSON.parse(added.stdout).token
    const started = await startServe([project, '--quiet', '--no-watch', '--users', join(work, '.flowctl', 'users.yaml')])
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
})
