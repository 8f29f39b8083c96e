// `main(['serve'], context)` in-process: the command takes its folder, environment and streams
// from the context it is given (not from process.*), serves real requests on a socket, and resolves
// with exit code 0 once the context's signal stops it.
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.js'
import { cleanupTempDirs, copyFixture, eventually } from '../helpers.js'

afterAll(cleanupTempDirs)

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough()
  let text = ''
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()))
  return { stream, text: () => text }
}

describe('main(["serve"], context)', () => {
  it('serves the context cwd with the context env and streams, and stops on its signal', async () => {
    const dir = await copyFixture('example')
    const stdout = capture()
    const stderr = capture()
    const stop = new AbortController()
    const exitCode = main(['serve', '--no-watch'], {
      cwd: dir,
      // PORT=0: a free port, read from this env only; the token overrides the fixture's .env.
      env: { PORT: '0', CRON_SECRET: 'in-process-tick', FLOWCTL_SECRET_ORDERS_TOKEN: 'in-process-token', NO_COLOR: '1' },
      stdout: stdout.stream,
      stderr: stderr.stream,
      signal: stop.signal,
    })
    let base = ''
    await eventually(async () => {
      base = /flowctl serving on (http:\/\/\S+)/.exec(stdout.text())?.[1] ?? ''
      return base !== ''
    }, 20_000)

    // The default users file is the context cwd's, and CRON_SECRET from the context env silences the tick hint.
    expect(stdout.text()).toContain(`none yet: ${join(dir, '.flowctl', 'users.yaml')}`)
    expect(stderr.text()).not.toContain('CRON_SECRET is not set')

    const order = (token: string) =>
      fetch(`${base}/api/run/shop/create-order`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sku: 'A-1', qty: 2 }),
      })
    expect((await order('in-process-token')).status).toBe(201)
    expect((await order('dev-orders-token-change-me')).status).toBe(401)
    // The request log goes to the context's stdout.
    await eventually(async () => stdout.text().includes('POST /api/run/shop/create-order 201'))

    stop.abort()
    expect(await exitCode).toBe(0)
    expect(stderr.text()).toContain('shutting down')
    await expect(fetch(`${base}/api/status`)).rejects.toThrow()
  })

  it('reports a project folder that does not exist with exit code 2 on the context stderr', async () => {
    const stderr = capture()
    const dir = join(await copyFixture('example'), 'missing')
    const exitCode = await main(['serve'], { cwd: dir, env: { PORT: '0', NO_COLOR: '1' }, stdout: capture().stream, stderr: stderr.stream })
    expect(exitCode).toBe(2)
    expect(stderr.text()).toMatch(/error: .*missing/)
  })
})
