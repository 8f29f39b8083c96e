// SPEC §19 through the real `flowctl serve`: (1) a secret that reaches an upstream inside a URL, and
// comes back in the form the WHATWG URL parser gave it (path and query encode differently), is
// `***` in the trace answer, in history and on the run page; (2) a caller's text in a failed run's
// reason reaches a chat webhook's alert escaped (no `<!channel>`, no disguised link); (3) `.flowctl/`
// is 0700 and its database files and users file 0600, also when an older flowctl left them wider.
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, eventually, flowctl, makeTempDir, startServe, type StartedServe } from '../helpers.js'

// Characters each part of a URL treats differently: a path keeps ' | ^ and encodes { } and `, a query
// encodes ' and keeps { } |; none of this is what encodeURIComponent or URLSearchParams write.
const WORD = 's3cr3tW0rd'
const SECRET = `${WORD} "q" <a>{b}|c^d'e\`é`
const CRON_SECRET = 'untrusted-output-tick'

let upstream: Server
let upstreamUrl: string
const alerts: Record<string, unknown>[] = []
const requestedUrls: string[] = []

beforeAll(async () => {
  // Echoes the request target it was called with (as Node's server gives it: what the client sent),
  // and collects alert webhooks.
  upstream = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk: Buffer) => (text += chunk))
    request.on('end', () => {
      if (request.url === '/alerts') alerts.push(JSON.parse(text) as Record<string, unknown>)
      else requestedUrls.push(request.url ?? '')
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ youCalled: request.url }))
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
})

afterAll(async () => {
  upstream?.closeAllConnections()
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()))
  await cleanupTempDirs()
})

async function writeProject(dir: string): Promise<void> {
  await mkdir(join(dir, 'flows'), { recursive: true })
  await writeFile(
    join(dir, 'flowctl.yaml'),
    `projectId: out\nname: Out\nlimits: { runsPerMinutePerIp: 0 }\nnotify:\n  channels:\n    chat: { type: webhook, url: "${upstreamUrl}/alerts" }\n  alerts: [{ flows: ["*"], channel: chat }]\n`,
  )
  await writeFile(join(dir, '.env'), `KEY=${JSON.stringify(SECRET)}\n`)
  await writeFile(
    join(dir, 'flows', 'echo.yaml'),
    `name: Echo
nodes:
  - { id: start, type: start, name: Start, method: post, next: call }
  - { id: call, type: http, name: Call, method: get, url: "${upstreamUrl}/echo/\${secrets.KEY}/x?key=\${secrets.KEY}&n=1", next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  )
  // Fails with the caller's own text as the reason (JSONata's $error).
  await writeFile(
    join(dir, 'flows', 'shout.yaml'),
    `name: Shout
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { msg: { type: string } } } }, next: fail }
  - { id: fail, type: set, name: Fail, values: { x: "{{= $error(start.msg) }}" }, next: done }
  - { id: done, type: end, name: Done }
`,
  )
}

const mode = async (path: string) => (await stat(path)).mode & 0o777

describe('what leaves the server for untrusted eyes', () => {
  let dir: string
  let serve: StartedServe

  beforeAll(async () => {
    dir = await makeTempDir('flowctl-untrusted-out-')
    await writeProject(dir)
    serve = await startServe(['--quiet', '--no-watch'], { cwd: dir, env: { CRON_SECRET } })
  }, 60_000)
  afterAll(async () => {
    serve?.child.kill('SIGTERM')
    await serve?.child.catch(() => undefined)
  })

  it('a secret echoed back in its URL forms is *** in the trace, history and run page', async () => {
    const response = await fetch(`${serve.base}/api/run/out/echo?_trace=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(response.status).toBe(200)
    const answer = await response.text()
    // The upstream really got the secret in the URL parser's forms (else this test proves nothing).
    const called = requestedUrls.at(-1)!
    expect(called).toContain(new URL(`http://h/${SECRET}`).pathname.slice(1))
    expect(called).toContain(new URL(`http://h/?${SECRET}`).search.slice(1))
    expect(called).not.toContain(encodeURIComponent(SECRET))

    expect(answer).toContain('***')
    expect(answer).not.toContain(WORD)
    const runId = response.headers.get('x-run-id')!
    const shown = await flowctl(['history', 'show', runId, '--json'], { cwd: dir })
    expect(shown.exitCode).toBe(0)
    expect(shown.stdout).toContain('***')
    expect(shown.stdout).not.toContain(WORD)
    const page = await (await fetch(`${serve.base}/runs/out/${runId}`)).text()
    expect(page).toContain('youCalled')
    expect(page).not.toContain(WORD)
  })

  it("a caller's <!channel> and link in a failure reach the chat webhook escaped", async () => {
    const tick = () => fetch(`${serve.base}/api/cron/tick`, { method: 'POST', headers: { authorization: `Bearer ${CRON_SECRET}` } })
    expect((await tick()).status).toBe(200) // the alert rule's first check starts its cursor
    const hostile = 'boom <!channel> <@U123> see <https://evil.example|your invoice> & more'
    const run = await fetch(`${serve.base}/api/run/out/shout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ msg: hostile }),
    })
    expect(run.status).toBe(500)
    const before = alerts.length
    expect((await tick()).status).toBe(200)
    await eventually(async () => alerts.length > before)
    const text = String(alerts.at(-1)!.text)
    expect(text).toContain('boom &lt;!channel&gt; &lt;@U123&gt; see &lt;https://evil.example|your invoice&gt; &amp; more')
    expect(text).not.toMatch(/<!channel>|<@U123>|<https:/)
    // The message's own formatting stays: its heading and bullet lines.
    expect(text).toMatch(/^⚠️ Out \(out\): 1 failed run\n• shout — run \S+ failed at node fail: /)
  })

  it('.flowctl is 0700 and its database files 0600', async () => {
    const state = join(dir, '.flowctl')
    expect(await mode(state)).toBe(0o700)
    for (const file of ['flowctl.db', 'flowctl.db-wal', 'flowctl.db-shm']) expect({ file, mode: await mode(join(state, file)) }).toEqual({ file, mode: 0o600 })
  })
})

describe('state an older flowctl left readable by others', () => {
  it('is tightened when flowctl opens it: folder 0700, database files and users file 0600', async () => {
    const dir = await makeTempDir('flowctl-untrusted-modes-')
    await writeProject(dir)
    const state = join(dir, '.flowctl')
    // An older flowctl's state: made by running once, then widened as it used to be (umask 022).
    expect((await flowctl(['run', 'echo', '--body', '{}'], { cwd: dir })).exitCode).toBe(0)
    const added = await flowctl(['users', 'add', 'ada', '--grant', 'out=viewer', '--json'], { cwd: dir })
    const token = (JSON.parse(added.stdout) as { token: string }).token
    expect(await mode(join(state, 'users.yaml'))).toBe(0o600)
    await chmod(state, 0o755)
    for (const file of ['flowctl.db', 'flowctl.db-wal', 'flowctl.db-shm', 'users.yaml']) {
      // -wal and -shm are gone after a clean close: made again (empty) as a crashed process leaves them.
      await writeFile(join(state, file), '', { flag: 'a' })
      await chmod(join(state, file), 0o644)
    }
    const serve = await startServe(['--quiet', '--no-watch'], { cwd: dir })
    try {
      // A signed-in request makes serve read the users file (the database was opened at start).
      expect((await fetch(`${serve.base}/api/openapi/out`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
      expect(await mode(state)).toBe(0o700)
      for (const file of ['flowctl.db', 'flowctl.db-wal', 'flowctl.db-shm', 'users.yaml'])
        expect({ file, mode: await mode(join(state, file)) }).toEqual({ file, mode: 0o600 })
    } finally {
      serve.child.kill('SIGTERM')
      await serve.child.catch(() => undefined)
    }
  }, 60_000)
})
