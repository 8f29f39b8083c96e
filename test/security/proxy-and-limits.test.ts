// Hostile callers against the client address and the rate limiter (issue 20, SPEC §17): a forged
// leftmost X-Forwarded-For entry, rotating values, junk values and a flood of addresses.
import { afterAll, describe, expect, it } from 'vitest'
import { RateLimiter } from '../../src/http/rate-limit.js'
import { forwardedClientIp, parseTrustProxy } from '../../src/http/trust-proxy.js'
import { awayFromMinuteEnd, cleanupTempDirs } from '../helpers.js'
import { startTestServer } from '../http/setup.js'

afterAll(cleanupTempDirs)

describe('--trust-proxy', () => {
  it('takes the first untrusted address from the right, never the leftmost by itself', () => {
    // One trusted hop (the proxy at the socket): the entry it appended is the client.
    expect(forwardedClientIp('10.0.0.2', '127.0.0.1, 203.0.113.7', 1)).toBe('203.0.113.7')
    expect(forwardedClientIp('10.0.0.2', '203.0.113.7', true)).toBe('203.0.113.7')
    // Two hops: the second proxy's view.
    expect(forwardedClientIp('10.0.0.2', '127.0.0.1, 198.51.100.4, 10.0.0.9', 2)).toBe('198.51.100.4')
    // More hops than entries: the leftmost is reached only because every hop after it is trusted.
    expect(forwardedClientIp('10.0.0.2', '198.51.100.4', 5)).toBe('198.51.100.4')
    // A list of proxies: only those are skipped; a forged entry left of a real client is ignored.
    expect(forwardedClientIp('10.0.0.2', '127.0.0.1, 203.0.113.7, 10.0.0.9', ['10.0.0.0/8'])).toBe('203.0.113.7')
    // A socket that is not a listed proxy: X-Forwarded-For is not believed at all.
    expect(forwardedClientIp('192.0.2.50', '127.0.0.1', ['10.0.0.0/8'])).toBe('192.0.2.50')
    // No header: the socket address.
    expect(forwardedClientIp('10.0.0.2', null, 1)).toBe('10.0.0.2')
  })

  it('never answers with junk: a value that is not an IP address falls back to the proxy that sent it', () => {
    expect(forwardedClientIp('10.0.0.2', 'x'.repeat(14_000), 1)).toBe('10.0.0.2')
    expect(forwardedClientIp('10.0.0.2', '203.0.113.7, not-an-ip', 1)).toBe('10.0.0.2')
    expect(forwardedClientIp('10.0.0.2', '1.2.3.4, <script>', ['10.0.0.0/8'])).toBe('10.0.0.2')
  })

  it('parses the flag: nothing is 1 hop, a number is hops, else addresses; bad values are usage errors', () => {
    expect(parseTrustProxy(undefined)).toBe(false)
    expect(parseTrustProxy(true)).toBe(1)
    expect(parseTrustProxy('3')).toBe(3)
    expect(parseTrustProxy('10.0.0.1, 192.168.0.0/16,loopback')).toEqual(['10.0.0.1', '192.168.0.0/16', 'loopback'])
    expect(() => parseTrustProxy('0')).toThrow(/hops from 1 to 100/)
    expect(() => parseTrustProxy('./my-project')).toThrow(/put folders first/)
  })

  it('a forged loopback X-Forwarded-For gets neither the loopback view nor a fresh rate limit', async () => {
    const server = await startTestServer({
      settings: [['runsPerMinutePerIp: 600', 'runsPerMinutePerIp: 3']],
      // The socket is a proxy on this machine; one hop trusted.
      app: { trustProxy: 1, fallbackClientIp: '127.0.0.1' },
    })
    try {
      const forged = { 'x-forwarded-for': '127.0.0.1, 203.0.113.7' }
      // /api/status: the full view is for loopback callers only.
      const status = await (await server.request('/api/status', { headers: forged })).json()
      expect(status.projects).toBeUndefined()
      const direct = await (await server.request('/api/status')).json()
      expect(direct.projects).toBeDefined()
      // Rotating the leftmost entry does not reset the limit of the real client.
      const statuses: number[] = []
      await awayFromMinuteEnd()
      for (let i = 0; i < 5; i++) {
        const response = await server.request('/api/run/shop/order-status/open', { headers: { 'x-forwarded-for': `192.0.2.${i}, 203.0.113.7` } })
        statuses.push(response.status)
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429])
    } finally {
      await server.close()
    }
  })
})

describe('rate limiter memory', () => {
  it('keys only IP addresses: 14 KB junk values share one bucket', () => {
    const limiter = new RateLimiter(() => 0)
    for (let i = 0; i < 2_000; i++) limiter.hit('p', `${'x'.repeat(14_000)}${i}`, 1_000_000)
    expect(limiter.size).toBe(1)
  })

  it('evicts instead of locking out: after 100k clients a new one is still allowed', () => {
    const limiter = new RateLimiter(() => 0)
    const before = process.memoryUsage().rss
    for (let i = 0; i < 150_000; i++) {
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
      limiter.hit('p', ip, 5)
    }
    expect(limiter.size).toBeLessThanOrEqual(100_000)
    expect(limiter.hit('p', '198.51.100.77', 5)).toEqual({ allowed: true })
    // A client over its limit stays limited while it keeps sending.
    for (let i = 0; i < 5; i++) limiter.hit('p', '198.51.100.78', 5)
    expect(limiter.hit('p', '198.51.100.78', 5).allowed).toBe(false)
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024)
  })

  it('a flood of requests with 14 KB forwarded values keeps RSS under 300 MB', async () => {
    const server = await startTestServer({ app: { trustProxy: 1, quiet: true } })
    try {
      let peak = process.memoryUsage().rss
      const junk = 'y'.repeat(14_000)
      for (let i = 0; i < 5_000; i++) {
        const response = await server.request('/api/run/shop/order-status/open', { headers: { 'x-forwarded-for': `${junk}${i}, ${junk}` } })
        expect(response.status === 200 || response.status === 429).toBe(true)
        if (i % 500 === 0) peak = Math.max(peak, process.memoryUsage().rss)
      }
      expect(peak).toBeLessThan(300 * 1024 * 1024)
    } finally {
      await server.close()
    }
  }, 60_000)
})
