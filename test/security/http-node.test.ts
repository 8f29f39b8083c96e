// Issue 20 / SPEC §17, the http node: maxResponseBytes (default 10 MiB), timeoutMs covering the
// whole body (a slow drip times out), bounded memory against endless upstreams, and no credential
// header carried across a cross-origin redirect. Real local servers, no mocks.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpNode } from '../../src/nodes/http.js'
import { nodeContext } from '../nodes/context.js'

interface Upstream {
  url: string
  server: Server
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<Upstream> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

const CHUNK = Buffer.alloc(64 * 1024, 'x')
let main: Upstream
let other: Upstream

beforeAll(async () => {
  main = await listen((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x')
    if (url.pathname === '/endless') {
      // Streams for as long as the client reads (480 MB would take a while: it never ends).
      response.writeHead(200, { 'content-type': 'application/octet-stream' })
      const pump = () => {
        while (!response.destroyed && response.write(CHUNK)) {}
        if (!response.destroyed) response.once('drain', pump)
      }
      pump()
      return
    }
    if (url.pathname === '/declared') {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(480 * 1024 * 1024) })
      response.write(CHUNK)
      return
    }
    if (url.pathname === '/sized') {
      const bytes = Number(url.searchParams.get('bytes'))
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.end(Buffer.alloc(bytes, 'y'))
      return
    }
    if (url.pathname === '/drip') {
      response.writeHead(200, { 'content-type': 'text/plain' })
      const timer = setInterval(() => (response.destroyed ? clearInterval(timer) : response.write('.')), 50)
      response.on('close', () => clearInterval(timer))
      return
    }
    if (url.pathname === '/redirect') {
      response.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' }).end()
      return
    }
    if (url.pathname === '/loop') {
      response.writeHead(302, { location: '/loop' }).end()
      return
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ origin: 'main', method: request.method, headers: request.headers }))
  })
  other = await listen((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ origin: 'other', method: request.method, headers: request.headers, body })),
    )
  })
})
afterAll(async () => {
  for (const upstream of [main, other]) {
    upstream?.server.closeAllConnections()
    await new Promise<void>((resolve) => upstream?.server.close(() => resolve()))
  }
})

const run = (spec: Record<string, unknown>, secrets: Record<string, string> = {}) =>
  httpNode.execute(nodeContext({ id: 'h', type: 'http', ...spec }, { secrets }))

describe('http node: answer size and time', () => {
  it('fails an answer larger than the default 10 MiB, with a clear reason', async () => {
    await expect(run({ url: `${main.url}/sized?bytes=${11 * 1024 * 1024}` })).rejects.toThrow(
      /HTTP GET request answer is larger than maxResponseBytes \(10485760 bytes/,
    )
  })

  it('takes an answer under maxResponseBytes and fails one over it', async () => {
    const { output } = await run({ url: `${main.url}/sized?bytes=1000`, maxResponseBytes: 1000 })
    expect((output as { body: string }).body).toHaveLength(1000)
    await expect(run({ url: `${main.url}/sized?bytes=1001`, maxResponseBytes: 1000 })).rejects.toThrow('larger than maxResponseBytes (1000 bytes')
  })

  it('fails at once on a declared content-length over the cap', async () => {
    await expect(run({ url: `${main.url}/declared` })).rejects.toThrow('it declared 503316480 bytes')
  })

  it('times out on a slow drip: timeoutMs covers the whole body', async () => {
    const began = Date.now()
    await expect(run({ url: `${main.url}/drip`, timeoutMs: 400 })).rejects.toThrow('HTTP GET request timed out after 400 ms')
    expect(Date.now() - began).toBeLessThan(5000)
  })

  it('keeps memory bounded through 14 endless answers at once', async () => {
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
    try {
      const calls = Array.from({ length: 14 }, () => run({ url: `${main.url}/endless`, timeoutMs: 20_000 }))
      const results = await Promise.allSettled(calls)
      for (const result of results) {
        expect(result.status).toBe('rejected')
        expect(String((result as PromiseRejectedResult).reason)).toContain('larger than maxResponseBytes')
      }
    } finally {
      clearInterval(sampler)
    }
    peak = Math.max(peak, process.memoryUsage().rss)
    // 14 × 10 MiB is the most the node may hold; 300 MB is the bound for the whole process.
    console.log(`endless answers: rss ${Math.round(before / 1e6)} MB before, peak ${Math.round(peak / 1e6)} MB`)
    expect(peak).toBeLessThan(300 * 1e6)
  })
})

describe('http node: redirects', () => {
  const secrets = { API_KEY: 'key-from-a-secret-123', TOKEN: 'bearer-from-a-secret-456' }
  const headers = { 'x-api-key': '${secrets.API_KEY}', Authorization: 'Bearer ${secrets.TOKEN}', Cookie: 'session=1', 'x-plain': 'kept' }

  it('drops credential headers and headers set from secrets on a cross-origin redirect', async () => {
    const to = encodeURIComponent(`${other.url}/landing`)
    const { output } = await run({ url: `${main.url}/redirect?to=${to}`, headers }, secrets)
    const body = (output as { body: { origin: string; headers: Record<string, string> } }).body
    expect(body.origin).toBe('other')
    expect(body.headers['x-plain']).toBe('kept')
    for (const name of ['x-api-key', 'authorization', 'cookie']) expect(body.headers[name]).toBeUndefined()
    expect(JSON.stringify(body)).not.toContain('from-a-secret')
  })

  it('drops a header whose value holds a secret that came through a reference', async () => {
    const to = encodeURIComponent(`${other.url}/landing`)
    const spec = { id: 'h', type: 'http', url: `${main.url}/redirect?to=${to}`, headers: { 'x-token': '{{ keep.token }}', 'x-plain': 'kept' } }
    const { output } = await httpNode.execute(nodeContext(spec, { secrets, scope: { keep: { token: `k=${secrets.API_KEY}` } } }))
    const body = (output as { body: { headers: Record<string, string> } }).body
    expect(body.headers['x-token']).toBeUndefined()
    expect(body.headers['x-plain']).toBe('kept')
  })

  it('keeps them on a same-origin redirect', async () => {
    const { output } = await run({ url: `${main.url}/redirect?to=/landing`, headers }, secrets)
    const body = (output as { body: { origin: string; headers: Record<string, string> } }).body
    expect(body.origin).toBe('main')
    expect(body.headers).toMatchObject({ 'x-api-key': secrets.API_KEY, authorization: `Bearer ${secrets.TOKEN}`, cookie: 'session=1' })
  })

  it('turns a POST into a GET on 303 and keeps method and body on 307', async () => {
    const to = encodeURIComponent(`${other.url}/landing`)
    const seeOther = (await run({ method: 'post', url: `${main.url}/redirect?status=303&to=${to}`, body: { a: 1 } })).output as {
      body: { method: string; body: string }
    }
    expect(seeOther.body).toMatchObject({ method: 'GET', body: '' })
    const temporary = (await run({ method: 'post', url: `${main.url}/redirect?status=307&to=${to}`, body: { a: 1 } })).output as {
      body: { method: string; body: string }
    }
    expect(temporary.body).toMatchObject({ method: 'POST', body: '{"a":1}' })
  })

  it('stops after 5 redirects', async () => {
    await expect(run({ url: `${main.url}/loop` })).rejects.toThrow('HTTP GET request followed 5 redirects and was sent on again')
  })
})
