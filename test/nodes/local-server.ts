// A real local HTTP server for http-node and engine tests: echoes requests, or never answers.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { freePort } from '../helpers.js'

export interface LocalServer {
  url: string
  close(): Promise<void>
}

/**
 * `/echo` answers JSON describing the request; `/text` plain text; `/hang` never answers;
 * `/status/<code>` answers that status; `/flaky?key=k&fail=n` answers 503 to the first n calls of key k.
 */
export async function startLocalServer(): Promise<LocalServer> {
  const hanging = new Set<IncomingMessage>()
  const flakyCalls = new Map<string, number>()
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const url = new URL(request.url ?? '/', 'http://x')
    if (url.pathname === '/hang') {
      hanging.add(request)
      return
    }
    const status = /^\/status\/(\d{3})$/.exec(url.pathname)
    if (status) {
      response.writeHead(Number(status[1]), { 'content-type': 'application/json' }).end(JSON.stringify({ status: Number(status[1]) }))
      return
    }
    if (url.pathname === '/flaky') {
      const key = url.searchParams.get('key') ?? ''
      const calls = (flakyCalls.get(key) ?? 0) + 1
      flakyCalls.set(key, calls)
      const failing = calls <= Number(url.searchParams.get('fail') ?? 0)
      response.writeHead(failing ? 503 : 200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls }))
      return
    }
    if (url.pathname === '/text') {
      response.writeHead(418, { 'content-type': 'text/plain', 'x-kind': 'teapot' }).end('short and stout')
      return
    }
    const body = Buffer.concat(chunks).toString('utf8')
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ method: request.method, path: url.pathname, query: url.search, headers: request.headers, body }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A URL on a port where nothing listens (connection refused). */
export async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/`
}
