// Who is asking: the client IP (the socket's address; X-Forwarded-For only behind a trusted proxy)
// and the origin the request came to (for the OpenAPI document's server URL).
import type { H3Event } from 'h3'
import { forwardedClientIp, type TrustProxy } from './trust-proxy.js'

export interface ClientOptions {
  /** Which X-Forwarded-For hops are believed (SPEC §17); false: none. */
  trustProxy: TrustProxy
  /**
   * Address used when the request has no socket (in-process `app.fetch` in tests). Unset in
   * production: a request without a socket address is then never treated as loopback.
   */
  fallbackClientIp?: string
  /** Host names (lower case, no port) that count as loopback Host headers beside localhost (SPEC §17). */
  allowedHosts?: string[]
}

/** The client's IP address, or `unknown` when there is none. */
export function clientIp(event: H3Event, options: ClientOptions): string {
  const socketAddress = event.req.ip ?? event.runtime?.node?.req.socket?.remoteAddress ?? options.fallbackClientIp ?? 'unknown'
  if (options.trustProxy === false || socketAddress === 'unknown') return socketAddress
  return forwardedClientIp(socketAddress, event.req.headers.get('x-forwarded-for'), options.trustProxy)
}

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms. */
export function isLoopback(ip: string): boolean {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip
  return ip === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)
}

/** `protocol://host` of the request; X-Forwarded-Host/Proto only with trustProxy. */
export function requestOrigin(event: H3Event, options: ClientOptions): string {
  const headers = event.req.headers
  let proto = event.url.protocol.replace(/:$/, '')
  let host = headers.get('host') ?? event.url.host
  if (options.trustProxy !== false) {
    const forwardedProto = headers.get('x-forwarded-proto')?.split(',')[0]?.trim()
    const forwardedHost = headers.get('x-forwarded-host')?.split(',')[0]?.trim()
    if (forwardedProto && /^https?$/i.test(forwardedProto)) proto = forwardedProto.toLowerCase()
    if (forwardedHost) host = forwardedHost
  }
  // A Host header is client input: keep only characters a host[:port] can contain.
  if (!/^[A-Za-z0-9.\-:[\]]+$/.test(host)) host = event.url.host
  return `${proto}://${host}`
}
