// 10,000 random hostile requests (bodies, headers, query strings, paths) against a project with
// every node kind and every auth type: 0 crashes, 0 answers of 5xx and 0 secrets in any answer,
// log line or stored run. 9,000 go through the in-process app (app.fetch, fast); 1,000 through a
// real `flowctl serve` over sockets. The generator is seeded, so a failure names a reproducible case.
import { createHmac } from 'node:crypto'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/http/app.js'
import { Workspace } from '../../src/serve/workspace.js'
import { loadProject } from '../../src/project/load.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { cleanupTempDirs, copyFixture, makeTempDir, startServe } from '../helpers.js'

const SEED = 20_2011
const IN_PROCESS = Number(process.env.FUZZ_IN_PROCESS ?? 9_000)
const SERVED = 1_000

const SECRETS = {
  ORDERS_TOKEN: 'orders-Tk7pQ2mZ9xW4vR8n',
  STOCK_API_URL: '', // set to the upstream's URL below; not a secret value worth checking
  FUZZ_BEARER: 'bearer-Jd83kDm29sLq0Pzx',
  FUZZ_USER: 'fuzz-user-Hq73Ms',
  FUZZ_PASS: 'fuzz-pass-Vn28Xk4Lw',
  FUZZ_KEY: 'fuzz-key-Zr61Bt9Qm3',
  FUZZ_HMAC: 'fuzz-hmac-Pw47Nc2Ys8',
  UPSTREAM_TOKEN: 'upstream-Gk52Hr8Vd1Tq',
}
const CRON_SECRET = 'cron-secret-Lm39Fz7Kp'
const SECRET_VALUES = [
  ...Object.entries(SECRETS)
    .filter(([name]) => name !== 'STOCK_API_URL')
    .map(([, value]) => value),
  CRON_SECRET,
]

// Each auth type on a flow that uses several node kinds; with the example project's flows every
// node kind is present (start end if switch insert set http get find update delete call each wait).
const FLOWS: Record<string, string> = {
  'fuzz-bearer.yaml': `name: Fuzz Bearer
nodes:
  - id: start
    type: start
    name: Start
    method: post
    auth: { type: bearer, token: "\${secrets.FUZZ_BEARER}" }
    inputs: { body: { type: object, properties: { n: { type: number }, s: { type: string, pattern: "^(a+)+$" } } } }
    next: pick
  - { id: pick, type: if, name: Pick, condition: { left: "{{start.n}}", op: gt, right: 10 }, next: { true: big, false: small } }
  - { id: big, type: set, name: Big, values: { size: big, n: "{{start.n}}" }, next: done }
  - { id: small, type: wait, name: Small, ms: 1, next: done }
  - { id: done, type: end, name: Done, body: { ok: true, n: "{{start.n}}" } }
`,
  'fuzz-basic.yaml': `name: Fuzz Basic
nodes:
  - id: start
    type: start
    name: Start
    method: put
    auth: { type: basic, username: "\${secrets.FUZZ_USER}", password: "\${secrets.FUZZ_PASS}" }
    inputs: { body: { type: object, required: [title], properties: { title: { type: string, maxLength: 200 } } } }
    next: save
  - { id: save, type: insert, name: Saved, collection: fuzz, document: { title: "{{start.title}}" }, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { id: "{{saved.insertedId}}" } }
`,
  'fuzz-apikey.yaml': `name: Fuzz Api Key
nodes:
  - id: start
    type: start
    name: Start
    method: get
    auth: { type: apiKey, key: "\${secrets.FUZZ_KEY}", header: X-Fuzz-Key }
    inputs:
      query: { type: object, properties: { q: { type: string, maxLength: 100 } } }
      headers: { type: object, properties: { x-tenant: { type: string } } }
    next: look
  - { id: look, type: find, name: Look, collection: fuzz, filter: { title: "{{start.q}}" }, next: done }
  - { id: done, type: end, name: Done, body: { count: "{{= $count(look.documents) }}" } }
`,
  'fuzz-hmac.yaml': `name: Fuzz Hmac
nodes:
  - id: start
    type: start
    name: Start
    method: post
    auth: { type: hmac, secret: "\${secrets.FUZZ_HMAC}", header: X-Fuzz-Signature, prefix: "sha256=" }
    accept: [json, form]
    next: done
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'fuzz-upstream.yaml': `name: Fuzz Upstream
nodes:
  - id: start
    type: start
    name: Start
    method: post
    inputs: { body: { type: object, properties: { path: { type: string }, q: { type: string } } } }
    next: call
  - id: call
    type: http
    name: Call
    method: post
    url: "\${secrets.STOCK_API_URL}/echo/{{ start.path }}"
    query: { q: "{{ start.q }}" }
    headers: { authorization: "Bearer \${secrets.UPSTREAM_TOKEN}" }
    body: { q: "{{ start.q }}" }
    timeoutMs: 2000
    next: done
  - { id: done, type: end, name: Done, body: { status: "{{call.status}}", echoed: "{{call.body}}" } }
`,
}

/** mulberry32: a small seeded generator, so every run sends the same requests. */
function generator(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
  return { next, int, pick, chance: (p: number) => next() < p }
}
type Random = ReturnType<typeof generator>

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  '😀',
  '%00',
  '%2e%2e%2f',
  '../../etc/passwd',
  '..\\..\\windows',
  '__proto__',
  'constructor',
  'prototype',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' OR 1=1 --",
  '${secrets.FUZZ_BEARER}',
  '{{secrets.FUZZ_BEARER}}',
  '{{= $eval("1") }}',
  '$where',
  '{"$gt": ""}',
  'a'.repeat(33) + '!',
  'x'.repeat(5000),
  '\r\nSet-Cookie: a=b',
  'null',
  'true',
  '1e309',
  '-0',
  'NaN',
  '127.0.0.1:3299/steal?',
  'http://169.254.169.254/latest',
  '\u202e',
  '\ufeff',
  'ǅ',
  '%',
  '%zz',
  '?#',
  '/',
  '\\',
]

function randomString(r: Random): string {
  if (r.chance(0.5)) return r.pick(NASTY_STRINGS)
  const length = r.pick([1, 3, 8, 40, 300])
  let text = ''
  for (let i = 0; i < length; i++) text += String.fromCharCode(r.chance(0.8) ? 32 + r.int(95) : r.int(0xffff))
  return text
}

function randomValue(r: Random, depth = 0): unknown {
  const kind = r.int(depth > 3 ? 5 : 8)
  switch (kind) {
    case 0:
      return randomString(r)
    case 1:
      return r.pick([0, -1, 1.5, 1e21, -1e-7, Number.MAX_SAFE_INTEGER + 2, 11, 3])
    case 2:
      return r.chance(0.5)
    case 3:
      return null
    case 4:
      return r.pick(['aaa', 'open', 'shipped', 'EUR', 'low'])
    case 5:
      return Array.from({ length: r.int(5) }, () => randomValue(r, depth + 1))
    default: {
      const object: Record<string, unknown> = {}
      for (let i = r.int(6); i > 0; i--) {
        const key = r.pick(['n', 's', 'title', 'items', 'sku', 'price', 'qty', 'path', 'q', 'baskets', 'status', '__proto__', 'constructor', randomString(r)])
        object[key] = randomValue(r, depth + 1)
      }
      return object
    }
  }
}

const SLUGS = [
  'quote',
  'bulk-quote',
  'create-order',
  'create-ticket',
  'get-ticket',
  'list-tickets',
  'update-ticket',
  'delete-ticket',
  'order-status',
  'stock-check',
  'nightly-cleanup',
  'fuzz-bearer',
  'fuzz-basic',
  'fuzz-apikey',
  'fuzz-hmac',
  'fuzz-upstream',
  'nope',
  '',
]
const OTHER_PATHS = [
  '/status',
  '/api/status',
  '/api/runs/shop',
  '/api/runs/shop/x',
  '/api/openapi/shop',
  '/docs/shop',
  '/docs/assets/..%2fpackage.json',
  '/flows/shop/quote',
  '/runs/shop/nope',
  '/api/cron/tick',
  '/sign-in',
  '/',
  '/api/events?x=1',
  '/api/replay/shop/nope',
  '/api/run',
  '/%00',
  '/api/run/shop/%2e%2e/%2e%2e',
]

/** Percent-encodes a path segment; a lone surrogate becomes the invalid UTF-8 it would be (%ED%A0%80). */
function encodeSegment(text: string): string {
  try {
    return encodeURIComponent(text)
  } catch {
    return `%ED%A0%80${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))}`
  }
}

interface FuzzRequest {
  path: string
  init: RequestInit & { headers: Record<string, string> }
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))
const json = { 'content-type': 'application/json' }
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** A request a flow accepts, with one hostile value in it: these reach the nodes. */
function plausibleRequest(r: Random): FuzzRequest {
  const value = () => (r.chance(0.5) ? randomString(r) : randomValue(r))
  const post = (slug: string, body: unknown, headers: Record<string, string> = {}, method = 'POST'): FuzzRequest => ({
    path: `/api/run/shop/${slug}${r.chance(0.2) ? '?_trace=1' : ''}`,
    init: { method, headers: { ...json, ...headers }, body: JSON.stringify(body) },
  })
  switch (r.int(9)) {
    case 0:
      return {
        path: `/api/run/shop/order-status/${encodeSegment(randomString(r))}?verbose=${encodeSegment(randomString(r))}`,
        init: { method: 'GET', headers: {} },
      }
    case 1:
      return post('quote', { items: [{ sku: value(), price: r.pick([1, 2.5, 0]), qty: r.pick([1, 2]) }], currency: r.pick(['EUR', 'USD']) })
    case 2:
      return post('create-ticket', { title: asText(value()).slice(0, 500) || 'x', priority: r.pick(['low', 'high', 'normal']) })
    case 3:
      return post(
        'fuzz-bearer',
        { n: r.pick([1, 50, -3]), ...(r.chance(0.3) ? { s: r.pick(['aaa', `${'a'.repeat(40)}!`]) } : {}) },
        bearer(SECRETS.FUZZ_BEARER),
      )
    case 4:
      return post(
        'fuzz-basic',
        { title: asText(value()).slice(0, 200) },
        { authorization: `Basic ${Buffer.from(`${SECRETS.FUZZ_USER}:${SECRETS.FUZZ_PASS}`).toString('base64')}` },
        'PUT',
      )
    case 5:
      return {
        path: `/api/run/shop/fuzz-apikey?q=${encodeSegment(randomString(r).slice(0, 100))}`,
        init: { method: 'GET', headers: { 'x-fuzz-key': SECRETS.FUZZ_KEY } },
      }
    case 6:
      return post('fuzz-upstream', { path: randomString(r), q: randomString(r) })
    case 7:
      return post('bulk-quote', { baskets: [{ items: [{ sku: value(), price: 1 }] }, { items: value() }] })
    default: {
      const body = JSON.stringify(randomValue(r))
      const signature = `sha256=${createHmac('sha256', SECRETS.FUZZ_HMAC).update(body).digest('hex')}`
      return { path: '/api/run/shop/fuzz-hmac', init: { method: 'POST', headers: { ...json, 'x-fuzz-signature': signature }, body } }
    }
  }
}

function randomRequest(r: Random): FuzzRequest {
  if (r.chance(0.4)) return plausibleRequest(r)
  const headers: Record<string, string> = {}
  let path: string
  if (r.chance(0.15)) path = r.pick(OTHER_PATHS)
  else {
    const params = Array.from({ length: r.int(3) }, () => encodeSegment(randomString(r)))
    path = ['/api/run/shop', r.pick(SLUGS), ...params].join('/').replace(/\/$/, '')
  }
  if (r.chance(0.6)) {
    const query = new URLSearchParams()
    for (let i = r.int(4); i >= 0; i--)
      query.append(
        r.pick(['_trace', 'q', 'verbose', 'warehouse', 'limit', 'status', '__proto__', randomString(r)]),
        r.pick(['1', 'true', 'junk', randomString(r)]),
      )
    path += `?${query}`
  }
  const method = r.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'POST', 'POST', 'PROPFIND'])
  // Credentials: right ones half of the time, so requests reach the engine; never in bodies.
  const good = r.chance(0.5)
  switch (r.int(6)) {
    case 0:
      headers.authorization = `Bearer ${good ? r.pick([SECRETS.FUZZ_BEARER, SECRETS.ORDERS_TOKEN]) : randomString(r).replace(/[^\x20-\x7e]/g, '')}`
      break
    case 1:
      headers.authorization = `Basic ${Buffer.from(good ? `${SECRETS.FUZZ_USER}:${SECRETS.FUZZ_PASS}` : randomString(r)).toString('base64')}`
      break
    case 2:
      headers['x-fuzz-key'] = good ? SECRETS.FUZZ_KEY : randomString(r).replace(/[^\x20-\x7e]/g, '')
      break
    case 3:
      headers.authorization = r.pick(['Bearer', 'Basic', 'Basic !!!', 'Bearer  ', 'Digest x', `Bearer ${CRON_SECRET}x`])
      break
    default:
      break
  }
  if (r.chance(0.3)) headers['x-forwarded-for'] = r.pick(['127.0.0.1', '127.0.0.1, 203.0.113.7', 'junk', randomString(r).replace(/[^\x20-\x7e]/g, '')])
  if (r.chance(0.2)) headers['x-tenant'] = randomString(r).replace(/[^\x20-\x7e]/g, '')
  if (r.chance(0.1)) headers.cookie = `flowctl_session=${randomString(r).replace(/[^\x21-\x7e]/g, '')}`
  if (r.chance(0.1)) headers.origin = r.pick(['https://evil.example', 'null', 'http://localhost'])
  let body: string | Uint8Array | undefined
  if (method !== 'GET' && method !== 'HEAD') {
    const form = r.int(6)
    if (form === 0) {
      body = 'x'.repeat(r.chance(0.2) ? 1_100_000 : 10)
      headers['content-type'] = 'application/json'
    } else if (form === 1) {
      body = new Uint8Array(Array.from({ length: 64 }, () => r.int(256)))
      headers['content-type'] = r.pick(['application/json', 'application/octet-stream', 'text/plain'])
    } else if (form === 2) {
      body = new URLSearchParams({ [randomString(r)]: randomString(r), title: randomString(r) }).toString()
      headers['content-type'] = 'application/x-www-form-urlencoded'
    } else if (form === 3) {
      body = '['.repeat(r.pick([10, 300, 5000])) + ']'.repeat(r.pick([0, 10]))
      headers['content-type'] = 'application/json'
    } else {
      body = JSON.stringify(randomValue(r))
      headers['content-type'] = r.pick([
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'junk/type',
      ])
    }
    // The hmac flow: a valid signature now and then, so signed bodies reach the engine.
    if (path.includes('fuzz-hmac') && r.chance(0.5)) {
      headers['x-fuzz-signature'] = `sha256=${createHmac('sha256', SECRETS.FUZZ_HMAC).update(body).digest('hex')}`
    } else if (r.chance(0.1)) headers['x-fuzz-signature'] = randomString(r).replace(/[^\x20-\x7e]/g, '')
  }
  return { path, init: { method, headers, body: body as BodyInit | undefined } }
}

/** Secrets in any of their plain forms an answer could carry. */
function leakedSecret(text: string): string | null {
  for (const secret of SECRET_VALUES) {
    if (text.includes(secret) || text.includes(encodeURIComponent(secret)) || text.includes(Buffer.from(secret).toString('base64'))) return secret
  }
  return null
}

let upstream: Server
let upstreamUrl = ''

beforeAll(async () => {
  // The upstream of the http nodes: answers every path, echoing only the body it was sent.
  upstream = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(req.url?.startsWith('/stock/') ? { available: 3 } : { received: body.slice(0, 200) }))
    })
  })
  // Port 0: the system picks a free one (one chosen beforehand could be taken before this bound it).
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise((resolve) => upstream.close(resolve))
  await cleanupTempDirs()
})

async function fuzzProject(dir: string): Promise<void> {
  // fetch-status calls any URL it is given (the example's SSRF demonstration): not part of a hardened project.
  await rm(join(dir, 'flows', 'fetch-status.yaml'))
  for (const [name, text] of Object.entries(FLOWS)) await writeFile(join(dir, 'flows', name), text)
  const env = Object.entries({ ...SECRETS, STOCK_API_URL: upstreamUrl })
    .map(([name, value]) => `${name}=${value}`)
    .join('\n')
  await writeFile(join(dir, '.env'), env + '\n')
  const settings = await readFile(join(dir, 'flowctl.yaml'), 'utf8')
  await writeFile(join(dir, 'flowctl.yaml'), settings.replace('runsPerMinutePerIp: 600', 'runsPerMinutePerIp: 0'))
}

/** Every secret the project's stored files could hold (the SQLite database and its WAL). */
async function leakedInStore(dir: string): Promise<string | null> {
  const folder = join(dir, '.flowctl')
  for (const name of await readdir(folder)) {
    if (!name.startsWith('flowctl.db')) continue
    const leaked = leakedSecret((await readFile(join(folder, name))).toString('latin1'))
    if (leaked) return `${name}: ${leaked}`
  }
  return null
}

/** The answer's text; an event stream never ends, so only its first chunk is read. */
async function bodyText(response: Response): Promise<string> {
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response.text()
  // A HEAD answer to /api/events has the stream's headers and no body.
  if (!response.body) return ''
  const reader = response.body.getReader()
  const first = await reader.read()
  await reader.cancel()
  return first.value ? Buffer.from(first.value).toString() : ''
}

interface Tally {
  statuses: Map<number, number>
  failures: string[]
}

function check(tally: Tally, index: number, request: FuzzRequest, status: number, text: string, headers: Headers): void {
  tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1)
  const where = `#${index} ${request.init.method} ${request.path.slice(0, 120)}`
  if (status >= 500) tally.failures.push(`${where}: ${status} ${text.slice(0, 300)}`)
  const leaked = leakedSecret(text) ?? leakedSecret([...headers].map(([name, value]) => `${name}: ${value}`).join('\n'))
  if (leaked) tally.failures.push(`${where}: answer carries a secret`)
}

describe('fuzz: 10,000 hostile requests', () => {
  it(`${IN_PROCESS} requests in-process: no 5xx, no secret in answers, logs or the store`, async () => {
    const dir = await copyFixture('example')
    await fuzzProject(dir)
    const workspace = new Workspace((p) => openProjectStore(p, { env: {} }))
    await workspace.add(await loadProject(dir, { env: {} }))
    expect(workspace.get('shop')!.project.problems.filter((p) => p.severity === 'error')).toEqual([])
    const logs: string[] = []
    const app = createApp(workspace, {
      trustProxy: false,
      quiet: false,
      usersFile: join(await makeTempDir(), 'users.yaml'),
      fallbackClientIp: '127.0.0.1',
      cronSecret: CRON_SECRET,
      log: (line) => logs.push(line),
    })
    const r = generator(SEED)
    const tally: Tally = { statuses: new Map(), failures: [] }
    const started = performance.now()
    // Reported, not asserted (timings on a shared machine): the longest the event loop was blocked.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 })
    loopDelay.enable()
    try {
      for (let i = 0; i < IN_PROCESS; i++) {
        const request = randomRequest(r)
        let response: Response
        try {
          response = await app.fetch(new Request(`http://localhost${request.path}`, request.init))
        } catch (error) {
          tally.failures.push(`#${i} ${request.init.method} ${request.path.slice(0, 120)}: threw ${(error as Error).message}`)
          continue
        }
        check(tally, i, request, response.status, await bodyText(response), response.headers)
        // Let the loop turn between requests, so the delay monitor measures one request at a time.
        await new Promise((resolve) => setImmediate(resolve))
      }
      loopDelay.disable()
      console.log(
        `in-process: ${IN_PROCESS} requests in ${((performance.now() - started) / 1000).toFixed(1)} s; event loop delay max ${(loopDelay.max / 1e6).toFixed(0)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`,
      )
      console.log('in-process statuses', JSON.stringify(Object.fromEntries([...tally.statuses].sort((a, b) => a[0] - b[0]))))
      expect(tally.failures.slice(0, 20)).toEqual([])
      expect(logs.filter((line) => line.startsWith('error'))).toEqual([])
      expect(leakedSecret(logs.join('\n'))).toBeNull()
      // The fuzz reached the engine, not only the front door.
      expect(tally.statuses.get(200) ?? 0).toBeGreaterThan(IN_PROCESS / 10)
      expect(tally.statuses.get(400) ?? 0).toBeGreaterThan(IN_PROCESS / 20)
    } finally {
      await workspace.close()
    }
    expect(await leakedInStore(dir)).toBeNull()
  }, 240_000)

  it(`${SERVED} requests through a real flowctl serve: no 5xx, no secret, the process stays up`, async () => {
    const dir = await copyFixture('example')
    await fuzzProject(dir)
    const { child: serve, base } = await startServe([dir, '--no-watch'], { env: { CRON_SECRET } })
    const r = generator(SEED + 1)
    const tally: Tally = { statuses: new Map(), failures: [] }
    try {
      const requests = Array.from({ length: SERVED }, () => randomRequest(r))
      let next = 0
      const worker = async () => {
        while (next < requests.length) {
          const index = next++
          const request = requests[index]!
          try {
            const response = await fetch(`${base}${request.path}`, { ...request.init, signal: AbortSignal.timeout(20_000) })
            check(tally, index, request, response.status, await bodyText(response), response.headers)
          } catch (error) {
            tally.failures.push(`#${index} ${request.init.method} ${request.path.slice(0, 120)}: ${(error as Error).message}`)
          }
        }
      }
      await Promise.all(Array.from({ length: 8 }, worker))
      expect(tally.failures.slice(0, 20)).toEqual([])
      // Still serving after the storm.
      expect((await fetch(`${base}/api/run/shop/order-status/open`)).status).toBe(200)
    } finally {
      serve.kill('SIGTERM')
    }
    const result = await serve
    expect(result.exitCode).toBe(0)
    const output = `${String(result.stdout)}\n${String(result.stderr)}`
    expect(output.split('\n').filter((line) => line.startsWith('error'))).toEqual([])
    expect(leakedSecret(output)).toBeNull()
    expect(await leakedInStore(dir)).toBeNull()
  }, 120_000)
})
