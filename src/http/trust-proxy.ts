// `serve --trust-proxy [N | addresses]` (SPEC §17): which hops of X-Forwarded-For are believed.
// proxy-addr (what Express uses for `trust proxy`) walks the list from the right, from the socket
// address, and stops at the first address that is not trusted: that one is the client. The leftmost
// entry, which the client writes itself, is never taken on its own.
import { createRequire } from 'node:module'
import { isIP } from 'node:net'
import { FlowctlError } from '../errors.js'

const require = createRequire(import.meta.url)
type ProxyAddr = typeof import('proxy-addr')
let proxyAddr: ProxyAddr | undefined
const loadProxyAddr = (): ProxyAddr => (proxyAddr ??= require('proxy-addr') as ProxyAddr)

/**
 * `false`: X-Forwarded-* are ignored. `true` or a number: that many proxy hops are trusted (`true`
 * is 1). A list: only these proxy addresses or CIDR ranges (and proxy-addr's names `loopback`,
 * `linklocal`, `uniquelocal`) are trusted.
 */
export type TrustProxy = boolean | number | readonly string[]

type TrustFunction = (address: string, hop: number) => boolean

const compiled = new WeakMap<readonly string[], TrustFunction>()

function trustFunction(trust: Exclude<TrustProxy, false>): TrustFunction {
  if (trust === true) return (_address, hop) => hop < 1
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  let fn = compiled.get(trust)
  if (!fn) {
    fn = loadProxyAddr().compile([...trust])
    compiled.set(trust, fn)
  }
  return fn
}

/**
 * The client address behind trusted proxies: the first untrusted address counted from the right.
 * An entry that is not an IP address (junk a client wrote) is never the answer: the proxy that
 * passed it on is, so a made-up value cannot become a rate-limit key or a loopback address.
 */
export function forwardedClientIp(socketAddress: string, forwardedFor: string | null, trust: Exclude<TrustProxy, false>): string {
  if (!forwardedFor) return socketAddress
  const request = { socket: { remoteAddress: socketAddress }, connection: { remoteAddress: socketAddress }, headers: { 'x-forwarded-for': forwardedFor } }
  const chain = loadProxyAddr().all(request as never, trustFunction(trust))
  for (let i = chain.length - 1; i > 0; i--) {
    if (isIP(chain[i]!) !== 0) return chain[i]!
  }
  return socketAddress
}

/** Parses the flag's value: nothing (1 hop), a hop count, or comma-separated addresses/CIDR ranges. */
export function parseTrustProxy(value: unknown): TrustProxy {
  if (value === undefined || value === false) return false
  if (value === true || value === '') return 1
  const text = String(value).trim()
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    if (hops < 1 || hops > 100) throw new FlowctlError('USAGE', `--trust-proxy expects a number of proxy hops from 1 to 100, got ${text}`)
    return hops
  }
  const addresses = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
  try {
    loadProxyAddr().compile(addresses)
  } catch (error) {
    throw new FlowctlError(
      'USAGE',
      `--trust-proxy expects a number of hops or comma-separated proxy addresses (CIDR ranges allowed), got "${text}": ${(error as Error).message}` +
        ' (a project folder right after --trust-proxy is read as its value: put folders first)',
    )
  }
  return addresses
}
