// End-to-end: the real `flowctl serve` process, its Run API, file-watch reload and shutdown.
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, eventually, flowctl, startServe } from '../helpers.js'

const TOKEN = 'dev-orders-token-change-me'

function greetingFlow(message: string): string {
  return [
    'name: Greet',
    'nodes:',
    '  - { id: start, type: start, name: Start, method: get, next: done }',
    `  - { id: done, type: end, name: Done, body: { message: "${message}" } }`,
    '',
  ].join('\n')
}

describe('flowctl serve (real process)', () => {
  let project: string
  let base: string
  let server: ResultPromise

  beforeAll(async () => {
    project = await copyFixture('example')
    const started = await startServe([project, '--host', '127.0.0.1'], { env: { CRON_SECRET: 'tick-secret' } })
    server = started.child
    base = started.base
  })

  afterAll(async () => {
    if (server.exitCode === null) server.kill('SIGKILL')
    await cleanupTempDirs()
  })

  it('runs a flow over HTTP and records it where `flowctl history` finds it', async () => {
    const response = await fetch(`${base}/api/run/shop/create-order`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sku: 'E2E', qty: 3 }),
    })
    expect(response.status).toBe(201)
    const runId = response.headers.get('x-run-id')
    expect(runId).toBeTruthy()
    expect(await response.json()).toMatchObject({ ok: true, id: expect.any(String) })

    const history = await flowctl(['history', 'show', String(runId), '--project', project, '--json'])
    expect(history).toMatchObject({ exitCode: 0, stderr: '' })
    expect(JSON.parse(history.stdout)).toMatchObject({ id: runId, trigger: 'http', method: 'POST', httpStatus: 201, status: 'success' })
  })

  it('rejects a missing token with the spec body (SPEC §21: it says the credential is missing)', async () => {
    const response = await fetch(`${base}/api/run/shop/create-order`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBeTruthy()
    expect(await response.json()).toEqual({ ok: false, errors: ['missing credential'] })
  })

  it('serves /status as HTML and the tick endpoint behind CRON_SECRET', async () => {
    const page = await fetch(`${base}/status`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(await page.text()).toContain('shop')
    expect((await fetch(`${base}/api/cron/tick`, { method: 'POST' })).status).toBe(401)
    const tick = await fetch(`${base}/api/cron/tick`, { method: 'POST', headers: { 'x-cron-secret': 'tick-secret' } })
    expect(tick.status).toBe(200)
    expect(await tick.json()).toMatchObject({ ok: true, ran: expect.any(Number), errors: 0 })
  })

  it('lets a crontab-style `flowctl tick` run beside it on the same project, and shows its heartbeat', async () => {
    const tick = await flowctl(['tick', '--project', project, '--at', '2026-11-21T02:00:05Z', '--json'])
    expect(tick.exitCode).toBe(0)
    expect(JSON.parse(tick.stdout)).toMatchObject({ ok: true, at: '2026-11-21T02:00:00.000Z', ran: 1, errors: 0 })
    // The same minute through the server's endpoint: the claim was taken, nothing runs twice.
    const tickApi = await fetch(`${base}/api/cron/tick`, { method: 'POST', headers: { authorization: 'Bearer tick-secret' } })
    expect(tickApi.status).toBe(200)
    const status = (await (await fetch(`${base}/api/status`)).json()) as { heartbeat: { at: string | null; stale: boolean } }
    expect(status.heartbeat.stale).toBe(false)
    expect(Date.now() - new Date(String(status.heartbeat.at)).getTime()).toBeLessThan(120_000)
    expect(JSON.stringify(status)).toContain('nightly-cleanup')
    const history = JSON.parse((await flowctl(['history', '--project', project, '--flow', 'nightly-cleanup', '--json'])).stdout)
    // Runs start at the real time; scheduledFor is the minute they are for (SPEC §16).
    expect(history.filter((r: { scheduledFor: string | null }) => r.scheduledFor === '2026-11-21T02:00:00.000Z')).toHaveLength(1)
    // A request served while the crontab tick shares the database still lands.
    const response = await fetch(`${base}/api/run/shop/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ sku: 'T', price: 1 }] }),
    })
    expect(response.status).toBe(200)
  })

  it('reloads a flow file when it is added, changed, broken and deleted', async () => {
    const file = join(project, 'flows', 'greet.yaml')
    const url = `${base}/api/run/shop/greet`
    const message = async () => {
      const response = await fetch(url)
      return response.status === 200 ? ((await response.json()) as { message: string }).message : `status ${response.status}`
    }

    await writeFile(file, greetingFlow('first'))
    await eventually(async () => (await message()) === 'first')

    await writeFile(file, greetingFlow('second'))
    await eventually(async () => (await message()) === 'second')

    // Broken: the last good version keeps serving and the problem shows on /api/status.
    await writeFile(file, 'name: Greet\nnodes:\n  - { id: start, type: start, name: Start, method: get, next: [oops\n')
    await eventually(async () => JSON.stringify(await (await fetch(`${base}/api/status`)).json()).includes('greet.yaml'))
    expect(await message()).toBe('second')

    await rm(file)
    await eventually(async () => (await fetch(url)).status === 404)
    expect(await (await fetch(url)).json()).toEqual({ ok: false, errors: ['flow not found'] })
  })

  it('shuts down cleanly on SIGTERM', async () => {
    server.kill('SIGTERM')
    const result = await server
    expect(result.exitCode).toBe(0)
    expect(String(result.stderr)).not.toMatch(/\n\s+at /)
  })
})
