// The socket side of `flowctl serve`: listhen around `toNodeHandler(app)`, a count of requests in
// flight, and a graceful shutdown (stop accepting, let requests finish within a grace period,
// then cut what is left).
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { H3 } from 'h3'
import { clientGroup } from './client-group.js'

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1'])

/**
 * Connection limits (SPEC §17 "connection exhaustion"): a client gets 10 s to send its headers and
 * 60 s for the whole request (a body limit of megabytes needs no more), an idle keep-alive
 * connection is closed after 5 s, one client (an IPv4 address or an IPv6 /64, SPEC §18) holds at
 * most `connectionsPerIp` sockets at once, and the server at most `maxConnections` in total (SPEC
 * §18: many addresses must not take every socket). Behind --trust-proxy every socket is the proxy's,
 * so the cap per client is off there (the proxy limits its clients); the total stays. There is no cap of requests per
 * connection: past Node's `maxRequestsPerSocket` a client that keeps sending on the socket (load
 * generators, pipelining clients) gets 503s from Node itself, which look like a store outage.
 */
const SERVER_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  connectionsPerIp: 256,
  maxConnections: 10_000,
} as const

export interface ListenOptions {
  host: string
  port: number
  /** Sockets one client (address, or IPv6 /64) may hold at once; 0 = no cap (default SERVER_LIMITS.connectionsPerIp). */
  connectionsPerIp?: number
  /** Sockets open at once in total (`serve --max-connections`); 0 = no cap (default SERVER_LIMITS.maxConnections). */
  maxConnections?: number
}

export interface RunningServer {
  /** Base URL to print, e.g. http://127.0.0.1:3000. */
  url: string
  /**
   * Stops accepting connections, waits up to `graceMs` for requests in flight, calls `cutOff`
   * (which aborts runs still going), closes every connection and resolves once the server is closed.
   */
  shutdown(graceMs: number, cutOff: () => void): Promise<void>
}

export async function listenApp(app: H3, options: ListenOptions): Promise<RunningServer> {
  const { toNodeHandler } = await import('h3/node')
  const { listen } = await import('listhen')
  let inFlight = 0
  let drained: (() => void) | null = null
  // A request is in flight until its handler is done (the run finished and was recorded) and its
  // response is over (sent, or the client went away). The socket closing alone is not enough: a
  // client that hangs up mid-run must not let shutdown cut the run off.
  const handlerDone = new WeakMap<ServerResponse, () => void>()
  const handle = toNodeHandler({
    fetch: (request: Extract<Parameters<H3['fetch']>[0], Request>) => {
      const res = request.runtime?.node?.res as ServerResponse | undefined
      const done = res ? handlerDone.get(res) : undefined
      if (!done) return app.fetch(request)
      return Promise.resolve(app.fetch(request)).finally(done)
    },
  } as unknown as H3)
  const tracked = (req: IncomingMessage, res: ServerResponse) => {
    inFlight++
    let pending = 2
    const settle = () => {
      if (--pending > 0) return
      inFlight--
      if (inFlight === 0) drained?.()
    }
    handlerDone.set(res, settle)
    res.once('close', settle)
    void handle(req, res)
  }

  const { host, port } = options
  const listener = await listen(tracked, {
    // isProd: an explicit port is used as given or fails, never silently swapped for another one.
    port: port === 0 ? { port: 0, random: true } : port,
    isProd: true,
    hostname: host,
    public: !LOCAL_HOSTS.has(host),
    showURL: false,
    qr: false,
    open: false,
    clipboard: false,
    // Our own SIGINT/SIGTERM handling shuts down gracefully; listhen's would call process.exit.
    autoClose: false,
  })
  const server = listener.server as Server
  limitConnections(server, options.connectionsPerIp ?? SERVER_LIMITS.connectionsPerIp, options.maxConnections ?? SERVER_LIMITS.maxConnections)

  return {
    url: displayUrl(host, listener.address.port),
    async shutdown(graceMs, cutOff) {
      const closed = new Promise<void>((done) => server.close(() => done()))
      // Keep-alive connections with nothing in flight are closed now; busy ones finish first.
      server.closeIdleConnections()
      if (inFlight > 0) {
        await Promise.race([new Promise<void>((done) => (drained = done)), new Promise<void>((done) => setTimeout(done, graceMs).unref())])
      }
      cutOff()
      server.closeAllConnections()
      await closed
    },
  }
}

/** Timeouts and keep-alive limits of SERVER_LIMITS, the total socket cap and the per-client one. */
function limitConnections(server: Server, perIp: number, total: number): void {
  server.headersTimeout = SERVER_LIMITS.headersTimeoutMs
  server.requestTimeout = SERVER_LIMITS.requestTimeoutMs
  server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeoutMs
  // Node closes a connection past this before it becomes a Socket: the cheapest refusal there is.
  if (total > 0) server.maxConnections = total
  capConnectionsPerClient(server, perIp)
}

/**
 * At most `perClient` sockets per client group (SPEC §18); past it a socket is destroyed on
 * arrival. Exported for tests, which drive it with sockets of any address (IPv6 /64s included).
 */
export function capConnectionsPerClient(server: Pick<Server, 'on'>, perClient: number): void {
  if (perClient <= 0) return
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = clientGroup(socket.remoteAddress ?? 'unknown')
    const count = (open.get(address) ?? 0) + 1
    if (count > perClient) {
      // Refused before any byte is read: the connection costs nothing more.
      socket.destroy()
      return
    }
    open.set(address, count)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

function displayUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`
}
