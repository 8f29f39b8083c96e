// SPEC §18 at the socket level, against the real `flowctl serve`: /api/events clients that never
// read, a total cap of sockets (`--max-connections`), IPv6 clients grouped by /64 for the rate
// limit, and the cluster rate limit with many addresses (on PostgreSQL when
// FLOWCTL_TEST_DATABASE_URL is set).
import { connect, type Socket } from 'node:net'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { awayFromMinuteEnd, cleanupTempDirs, eventually, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { PG_URL, pgSkipNotice } from '../pg-helpers.js'
import { latestRun, MAX_PROBE_MS, MAX_RSS_GROWTH, underAttack } from './hostile-harness.js'

pgSkipNotice('hostile-net (cluster rate limit)')

const started: StartedServe[] = []
afterAll(async () => {
  for (const serve of started) serve.child.kill('SIGKILL')
  await Promise.all(started.map((serve) => serve.child.catch(() => undefined)))
  await cleanupTempDirs()
})

/** A run that fails with a reason of 2,000 characters (the cap): each `run` event is about 2.4 KB. */
const LOUD_FAILURE = `name: Loud
nodes:
  - id: start
    type: start
    name: Start
    method: post
    inputs: { body: { type: object, properties: { msg: { type: string } } } }
    next: boom
  - { id: boom, type: set, name: Boom, values: { x: "{{= $error(start.msg) }}" } }
`
const PING =
  'name: Ping\nnodes:\n  - { id: start, type: start, name: Start, method: post, next: done }\n  - { id: done, type: end, name: Done, body: { pong: true } }\n'

async function project(settings: string, flows: Record<string, string>): Promise<string> {
  const dir = await makeTempDir('flowctl-net-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), settings)
  for (const [slug, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', `${slug}.yaml`), text)
  return dir
}

async function serve(args: string[]): Promise<StartedServe> {
  const server = await startServe(args)
  started.push(server)
  return server
}

/** A raw socket to serve, and whether serve closed it. */
function open(port: number): Promise<Socket & { ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }) as Socket & { ended: Promise<void> }
    socket.ended = new Promise((done) => socket.once('close', () => done()))
    socket.once('error', () => {})
    socket.once('connect', () => resolve(socket))
    setTimeout(() => reject(new Error('connect timed out')), 5_000).unref()
  })
}

/** `promise`, or a failure named `message` once `ms` pass. */
async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

const EVENTS_REQUEST = 'GET /api/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n'

describe('/api/events clients that never read', () => {
  it('are disconnected once their buffer is full; a reading client keeps receiving; serve stays responsive', async () => {
    const dir = await project('projectId: ev\nname: Events\nhistory: { keep: none }\nlimits: { runsPerMinutePerIp: 0, eventBufferBytes: 16384 }\n', {
      loud: LOUD_FAILURE,
    })
    const server = await serve([dir, '--quiet'])
    // The reader: a real client that reads every byte and counts the run events.
    let readerEvents = 0
    const reader = await open(server.port)
    // Keeps the last 10 characters: a marker split across two chunks is counted once.
    let tail = ''
    reader.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1')
      readerEvents += text.split('event: run\n').length - 1
      tail = text.slice(-10)
    })
    reader.write(EVENTS_REQUEST)
    const stalled: (Socket & { ended: Promise<void> })[] = []
    const msg = 'x'.repeat(2_500)
    const RUNS = 3_000
    const measured = await underAttack(
      server,
      async () => {
        for (let i = 0; i < 50; i++) {
          const socket = await open(server.port)
          socket.write(EVENTS_REQUEST)
          // Never reads: what serve sends piles up in the kernel, then in serve, until serve cuts it.
          socket.pause()
          stalled.push(socket)
        }
        // One caller publishes RUNS runs: each stalled client is sent RUNS × 2.4 KB, far more
        // than the kernel's socket buffers (about 4 MB) and its 16 KB buffer hold.
        let sent = 0
        for (; sent < RUNS; sent++) {
          const response = await fetch(`${server.base}/api/run/ev/loud`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ msg }),
          })
          await response.arrayBuffer()
        }
        return sent
      },
      // The other client reads the newest run: a small request whose wait is the event loop's
      // (the default probe, /api/status, grows with the failures this attack records).
      () => fetch(`${server.base}/api/runs/ev?limit=1`),
    )
    expect(measured.result).toBe(RUNS)
    const run = await latestRun(server, 'ev', 'loud')
    expect(run).toMatchObject({ status: 'error', failedNodeId: 'boom' })
    // The reason is the one the flow raised, capped at 2,000 characters (SPEC §17).
    expect(run?.error).toMatch(/^x{1900,} … \(\d+ more characters\)$/)
    expect(String(run?.error)).toHaveLength(2_000)
    // Each stalled client, once it reads what reached it, finds that serve closed the stream.
    for (const socket of stalled) socket.resume()
    await within(Promise.all(stalled.map((socket) => socket.ended)), 20_000, 'a stalled client was never disconnected')
    // The reader got every run and still gets new ones.
    await eventually(async () => readerEvents >= RUNS)
    expect(reader.destroyed).toBe(false)
    await fetch(`${server.base}/api/run/ev/loud`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"msg":"after"}' })
    await eventually(async () => readerEvents === RUNS + 1)
    reader.destroy()
    expect(measured.worstProbeMs).toBeLessThan(MAX_PROBE_MS)
    expect(measured.peakRss - measured.idleRss).toBeLessThan(MAX_RSS_GROWTH)
    console.info(
      `[hostile-net] events: worst probe ${measured.worstProbeMs.toFixed(1)} ms over ${measured.probes} probes, RSS +${((measured.peakRss - measured.idleRss) / 2 ** 20).toFixed(0)} MB`,
    )
  }, 120_000)
})

/** Sends a request on a fresh socket and resolves with the answer's status line ('' when the socket was closed unanswered). */
async function statusLine(port: number, path = '/api/status'): Promise<string> {
  const socket = await open(port)
  let text = ''
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()))
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
  await socket.ended
  return text.split('\r\n')[0] ?? ''
}

describe('serve --max-connections', () => {
  it('closes the socket past the cap at once, and accepts a new one when another closes', async () => {
    const dir = await project('projectId: conn\nname: Conn\n', { ping: PING })
    const server = await serve([dir, '--quiet', '--max-connections', '20'])
    // startServe's readiness check left a keep-alive socket; serve closes it after 5 s idle.
    await new Promise((resolve) => setTimeout(resolve, 5_500))
    const held: (Socket & { ended: Promise<void> })[] = []
    for (let i = 0; i < 20; i++) held.push(await open(server.port))
    const extra = await open(server.port)
    await extra.ended
    // The 20 held sockets are still open (the cap is in total: one address here, far under 256).
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(held.filter((socket) => socket.destroyed)).toHaveLength(0)
    // One closes: a new client is served.
    held.pop()!.destroy()
    await eventually(async () => (await statusLine(server.port)).startsWith('HTTP/1.1 200'))
    for (const socket of held) socket.destroy()
  })

  it('rejects a value that is not a whole number as a usage error', async () => {
    const { flowctl } = await import('../helpers.js')
    const result = await flowctl(['serve', '--max-connections', 'many', '--port', '0'])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain('--max-connections expects a whole number of sockets (0 = no cap), got "many"')
  })
})

async function postFrom(base: string, path: string, address: string): Promise<number> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'x-forwarded-for': address } })
  await response.arrayBuffer()
  return response.status
}

describe('IPv6 clients are their /64 for runsPerMinutePerIp', () => {
  it('two addresses of one /64 share the limit; another /64 does not; ::ffff:a.b.c.d is a.b.c.d', async () => {
    const dir = await project('projectId: six\nname: Six\nlimits: { runsPerMinutePerIp: 2 }\n', { ping: PING })
    const server = await serve([dir, '--quiet', '--trust-proxy'])
    await awayFromMinuteEnd()
    const path = '/api/run/six/ping'
    const statuses: number[] = []
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:db8:1:2::3', '2001:db8:1:3::1', '2001:db8:1:3::2']) {
      statuses.push(await postFrom(server.base, path, address))
    }
    expect(statuses).toEqual([200, 200, 429, 200, 200])
    const mapped: number[] = []
    for (const address of ['::ffff:203.0.113.9', '203.0.113.9', '::ffff:203.0.113.9', '203.0.113.10']) mapped.push(await postFrom(server.base, path, address))
    expect(mapped).toEqual([200, 200, 429, 200])
  })
})

describe.skipIf(!PG_URL)('cluster rate limit on PostgreSQL with many addresses', () => {
  const schema = `net_${randomBytes(4).toString('hex')}`
  afterAll(async () => {
    const { default: pg } = await import('pg')
    const admin = new pg.Client({ connectionString: PG_URL })
    await admin.connect()
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
  })

  it('a fresh address still gets 2xx after thousands of others, and a /64 shares one budget', async () => {
    const settings = `projectId: clu\nname: Cluster\ndatabase: { url: "${PG_URL}", schema: ${schema} }\nlimits: { runsPerMinutePerIp: 2, rateLimitScope: cluster }\n`
    const dir = await project(settings, { ping: PING })
    const server = await serve([dir, '--quiet', '--trust-proxy'])
    await awayFromMinuteEnd(30_000)
    const path = '/api/run/clu/ping'
    const ADDRESSES = 3_000
    let next = 0
    const refused: string[] = []
    const caller = async () => {
      while (next < ADDRESSES) {
        const i = next++
        const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
        if ((await postFrom(server.base, path, address)) !== 200) refused.push(address)
      }
    }
    await Promise.all(Array.from({ length: 8 }, caller))
    expect(refused).toEqual([])
    expect(await postFrom(server.base, path, '198.51.100.200')).toBe(200)
    const six: number[] = []
    for (const address of ['2001:db8:9:9::1', '2001:db8:9:9::2', '2001:db8:9:9::3', '2001:db8:9:a::1']) six.push(await postFrom(server.base, path, address))
    expect(six).toEqual([200, 200, 429, 200])
  }, 120_000)
})
