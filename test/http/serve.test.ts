// `serveCommand` in-process on a real socket: startup output, reload on file changes (timed),
// the loopback check from a real socket address, and graceful shutdown with a request in flight.
import { rm, writeFile } from 'node:fs/promises'
import { Agent, createServer, request, type Server } from 'node:http'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serveCommand } from '../../src/cli/serve.js'
import { loadProject } from '../../src/project/load.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { cleanupTempDirs, copyFixture, eventually, makeTempDir } from '../helpers.js'

function greet(message: string): string {
  return [
    'name: Greet',
    'nodes:',
    '  - { id: start, type: start, name: Start, method: get, next: done }',
    `  - { id: done, type: end, name: Done, body: { message: "${message}" } }`,
    '',
  ].join('\n')
}

function collect(stream: PassThrough): () => string {
  let text = ''
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()))
  return () => text
}

describe('serveCommand', () => {
  let dir: string
  let base: string
  let stop: AbortController
  let served: Promise<void>
  let stdout: () => string
  let stderr: () => string
  let hanging: Server
  let hangingPort: number

  beforeAll(async () => {
    dir = await copyFixture('example')
    hanging = createServer(() => {
      /* answers late: see the shutdown test */
    })
    await new Promise<void>((ready) => hanging.listen(0, '127.0.0.1', () => ready()))
    hangingPort = (hanging.address() as { port: number }).port
    stop = new AbortController()
    const out = new PassThrough()
    const err = new PassThrough()
    stdout = collect(out)
    stderr = collect(err)
    let listening!: (url: string) => void
    const ready = new Promise<string>((resolve) => (listening = resolve))
    served = serveCommand([dir, await copyFixture('example')], {
      port: 0,
      host: '127.0.0.1',
      users: join(await makeTempDir(), 'users.yaml'),
      env: { CRON_SECRET: 'tick-secret' },
      signal: stop.signal,
      onListening: listening,
      stdout: out,
      stderr: err,
    })
    served.catch(() => {})
    base = await ready
  })

  afterAll(async () => {
    stop.abort()
    await served.catch(() => {})
    hanging.closeAllConnections()
    hanging.close()
    await cleanupTempDirs()
  })

  it('prints the URLs of each project and skips a second project with the same id', async () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(stdout()).toContain(`${base}/api/run/shop/`)
    expect(stdout()).toContain(`${base}/status`)
    expect(stdout()).toContain(`${base}/docs/shop`)
    expect(stderr()).toContain('projectId "shop" is already served')
  })

  it('treats a real loopback socket as local on /api/status', async () => {
    const view = await (await fetch(`${base}/api/status`)).json()
    expect(view.projects[0].projectId).toBe('shop')
  })

  it('serves an added, changed, broken and deleted flow file once written (how fast: bench/reload.js)', async () => {
    const file = join(dir, 'flows', 'greet.yaml')
    const url = `${base}/api/run/shop/greet`
    const message = async () => {
      const response = await fetch(url)
      return response.status === 200 ? ((await response.json()) as { message: string }).message : `status ${response.status}`
    }
    // How fast a reload is lives in bench/reload.js (≤ 200 ms); here only that it happens.
    const changed = async (write: () => Promise<void>, check: () => Promise<boolean>) => {
      await write()
      await eventually(check, 10_000, 5)
    }
    await changed(
      () => writeFile(file, greet('first')),
      async () => (await message()) === 'first',
    )
    await changed(
      () => writeFile(file, greet('second')),
      async () => (await message()) === 'second',
    )
    await writeFile(file, 'name: Greet\nnodes:\n  - { id: start, type: start, name: Start, method: get, next: [oops\n')
    const problems = async () => ((await (await fetch(`${base}/api/status`)).json()) as { projects: { problems: string[] }[] }).projects[0]!.problems
    await eventually(async () => (await problems()).some((p) => p.startsWith('flows/greet.yaml:')), 2_000, 10)
    expect(await message()).toBe('second') // the last good version keeps serving
    expect(stdout() + stderr()).toMatch(/flows\/greet\.yaml:\d+:\d+: /)
    // Deleting waits for chokidar's atomic-write window (100 ms) before the unlink is reported.
    await changed(
      () => rm(file),
      async () => (await fetch(url)).status === 404,
    )
    expect(stderr() + stdout()).toContain('reloaded shop (flows/greet.yaml): flow greet removed')
  })

  it('serves the last of many quick writes (chokidar can drop a change event in a burst)', async () => {
    const file = join(dir, 'flows', 'burst.yaml')
    for (let i = 0; i < 15; i++) {
      await writeFile(file, greet(`burst ${i}`).replace('name: Greet', 'name: Burst'))
      await new Promise((r) => setTimeout(r, 5 + (i % 4) * 15))
    }
    const message = async () => {
      const response = await fetch(`${base}/api/run/shop/burst`)
      return response.status === 200 ? ((await response.json()) as { message: string }).message : ''
    }
    await eventually(async () => (await message()) === 'burst 14', 2_000, 10)
    await rm(file)
  })

  it('reads bodies from the Node request: exact answers, and a chunked body over the limit is a 413 on a reusable connection', async () => {
    const echo = [
      'name: Echo',
      'nodes:',
      '  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, required: [n], properties: { n: { type: integer } } } }, next: done }',
      '  - { id: done, type: end, name: Done, status: 202, headers: { x-echo: "{{start.n}}" }, body: { n: "{{start.n}}" } }',
      '',
    ].join('\n')
    await writeFile(join(dir, 'flows', 'echo.yaml'), echo)
    const url = `${base}/api/run/shop/echo`
    await eventually(async () => (await fetch(url, { method: 'OPTIONS' })).status === 204, 2_000, 10)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const post = (chunks: string[], headers: Record<string, string> = {}) =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: string; reused: boolean }>((resolve, reject) => {
        const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (body += chunk))
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, reused: req.reusedSocket }))
        })
        req.on('error', reject)
        for (const chunk of chunks) req.write(chunk)
        req.end()
      })
    try {
      const ok = await post(['{"n":', '7}'])
      expect(ok).toMatchObject({ status: 202, body: '{"n":7}' })
      expect(ok.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(ok.headers['x-echo']).toBe('7')
      expect(ok.headers['x-run-id']).toMatch(/^[0-9a-z]+$/)
      const invalid = await post(['{"n":"x"}'])
      expect(invalid).toMatchObject({ status: 400, body: '{"ok":false,"errors":["body/n: must be integer"]}' })
      const big = await post(Array.from({ length: 20 }, () => ' '.repeat(60_000)))
      expect(big).toMatchObject({ status: 413, body: '{"ok":false,"errors":["body exceeds 1048576 bytes"]}' })
      const after = await post(['{"n":8}'])
      expect(after).toMatchObject({ status: 202, body: '{"n":8}', reused: true })
    } finally {
      agent.destroy()
      await rm(join(dir, 'flows', 'echo.yaml'))
    }
  })

  it('ticks over HTTP with the secret', async () => {
    const response = await fetch(`${base}/api/cron/tick`, { method: 'POST', headers: { 'x-cron-secret': 'tick-secret' } })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ ok: true, errors: 0 })
  })

  it('shuts down on abort: in-flight requests finish, new connections are refused, then it resolves', async () => {
    // A run held open by an http node calling a server that answers after 300 ms.
    // Each step waits until the server's runs reached the hanging server, not for a fixed time, so
    // a loaded machine cannot abort a request the server has not received yet.
    const reached = new Map<string, () => void>()
    const reachedPath = (path: string) => new Promise<void>((resolve) => reached.set(path, resolve))
    const fastReached = reachedPath('/')
    const slowReached = reachedPath('/slow')
    hanging.removeAllListeners('request')
    hanging.on('request', (req, res) => {
      reached.get(req.url ?? '')?.()
      setTimeout(() => res.end('{}'), req.url === '/slow' ? 700 : 300)
    })
    const inFlight = fetch(`${base}/api/run/shop/fetch-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer dev-orders-token-change-me' },
      body: JSON.stringify({ url: `http://127.0.0.1:${hangingPort}/` }),
    })
    // A second, slower run whose client hangs up before the answer: shutdown still waits for it, and
    // it is recorded as a success rather than cut off because its socket closed.
    const hangUp = new AbortController()
    const abandoned = fetch(`${base}/api/run/shop/fetch-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer dev-orders-token-change-me' },
      body: JSON.stringify({ url: `http://127.0.0.1:${hangingPort}/slow` }),
      signal: hangUp.signal,
    }).catch((error: unknown) => error)
    await Promise.all([fastReached, slowReached])
    hangUp.abort()
    expect(await abandoned).toBeInstanceOf(Error)
    // An open dashboard's event stream is ended by the server at shutdown (a clean end, not a cut
    // connection after the 10 s grace period).
    const events = (await fetch(`${base}/api/events`)).body!.getReader()
    await events.read()
    stop.abort()
    let ended = false
    for (;;) {
      const chunk = await events.read()
      if (chunk.done) {
        ended = true
        break
      }
    }
    expect(ended).toBe(true)
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ status: 200 })
    await served
    await expect(fetch(`${base}/api/status`)).rejects.toThrow()
    expect(stderr()).not.toMatch(/\n\s+at /)
    const project = await loadProject(dir, { env: {} })
    const store = await openProjectStore(project, { env: {} })
    try {
      const runs = await store.history.listRuns({ projectId: 'shop', flow: 'fetch-status', limit: 10 })
      expect(runs.map((run) => [run.status, run.httpStatus, run.error])).toEqual([
        ['success', 200, null],
        ['success', 200, null],
      ])
    } finally {
      await store.close()
    }
  })
})

describe('serveCommand with an open /api/events stream', () => {
  it('ends the stream itself at shutdown (a clean end, not a connection cut after the 10 s grace)', async () => {
    const stop = new AbortController()
    let listening!: (url: string) => void
    const ready = new Promise<string>((resolve) => (listening = resolve))
    const served = serveCommand([await copyFixture('example')], {
      port: 0,
      host: '127.0.0.1',
      watch: false,
      quiet: true,
      env: {},
      signal: stop.signal,
      onListening: listening,
      users: join(await makeTempDir(), 'users.yaml'),
      stdout: new PassThrough(),
      stderr: new PassThrough(),
    })
    const base = await ready
    const events = (await fetch(`${base}/api/events`)).body!.getReader()
    expect(new TextDecoder().decode((await events.read()).value)).toContain(': connected')
    stop.abort()
    let chunk = await events.read()
    while (!chunk.done) chunk = await events.read()
    expect(chunk.done).toBe(true)
    await served
  })
})

describe('serveCommand startup failures', () => {
  it('a folder without a project is the same error as for every command (exit 2), said once', async () => {
    const empty = await makeTempDir()
    const err = new PassThrough()
    const text = collect(err)
    await expect(serveCommand([empty], { port: 0, stdout: new PassThrough(), stderr: err, env: {} })).rejects.toMatchObject({
      name: 'FlowctlError',
      code: 'PROJECT_NOT_FOUND',
      exitCode: 2,
      message: expect.stringContaining(empty),
    })
    expect(text()).toBe('')
  })

  it('throws FlowctlError (exit 1) when no project can be loaded, after printing why', async () => {
    const broken = await copyFixture('example')
    await writeFile(join(broken, 'flowctl.yaml'), 'projectId: [oops\n')
    const err = new PassThrough()
    const text = collect(err)
    await expect(serveCommand([broken], { port: 0, stdout: new PassThrough(), stderr: err, env: {} })).rejects.toMatchObject({
      name: 'FlowctlError',
      exitCode: 1,
    })
    expect(text()).toContain(broken)
  })
})

describe('serveCommand on a port in use', () => {
  it('fails (exit 1, not a usage error) instead of moving to another port', async () => {
    const busy = createServer()
    await new Promise<void>((ready) => busy.listen(0, '127.0.0.1', () => ready()))
    const port = (busy.address() as { port: number }).port
    try {
      const dir = await copyFixture('example')
      await expect(
        serveCommand([dir], { port, host: '127.0.0.1', watch: false, stdout: new PassThrough(), stderr: new PassThrough(), env: {} }),
      ).rejects.toMatchObject({ name: 'FlowctlError', exitCode: 1, message: expect.stringContaining(`port ${port} on 127.0.0.1 is already in use`) })
    } finally {
      busy.close()
    }
  })
})
