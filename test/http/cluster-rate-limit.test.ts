// The cluster rate limiter (src/http/cluster-rate-limit.ts) on real stores: two limiters on two
// connections to one SQLite file stand in for two instances. What matters: together they never
// admit more than the limit, and under load most requests are admitted without a store call.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ClusterRateLimiter } from '../../src/http/cluster-rate-limit.js'
import type { GuardStore } from '../../src/model/guard-types.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'

/** The store's guards, counting the upserts that reach it. */
function counting(guards: GuardStore): { guards: GuardStore; calls: () => number } {
  let calls = 0
  const wrapped: GuardStore = Object.create(guards) as GuardStore
  wrapped.addRateHits = (...args) => {
    calls++
    return guards.addRateHits(...args)
  }
  return { guards: wrapped, calls: () => calls }
}

describe('cluster rate limiter', () => {
  let dir: string
  let a: Store
  let b: Store
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowctl-cluster-limit-'))
    a = await openSqliteStore(join(dir, 'flowctl.db'))
    b = await openSqliteStore(join(dir, 'flowctl.db'))
  })
  afterAll(async () => {
    await a.close()
    await b.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('admits exactly the limit across two instances hit at once, and refuses the rest with Retry-After', async () => {
    const first = new ClusterRateLimiter(a.guards)
    const second = new ClusterRateLimiter(b.guards)
    const decisions = await Promise.all(Array.from({ length: 90 }, (_, i) => (i % 2 ? first : second).hit('p1', '10.0.0.9', 30)))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(30)
    const refused = decisions.find((d) => !d.allowed)
    expect(refused && !refused.allowed && refused.retryAfterSeconds).toBeGreaterThan(0)
    // Another IP and another project have budgets of their own.
    expect(await first.hit('p1', '10.0.0.10', 30)).toEqual({ allowed: true })
    expect(await second.hit('p2', '10.0.0.9', 30)).toEqual({ allowed: true })
  })

  it('serves a busy client from leased budget: far fewer store calls than requests', async () => {
    const { guards, calls } = counting(a.guards)
    const limiter = new ClusterRateLimiter(guards)
    let allowed = 0
    for (let burst = 0; burst < 40; burst++) {
      const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.hit('p3', '10.0.0.1', 1_000_000)))
      allowed += decisions.filter((d) => d.allowed).length
    }
    expect(allowed).toBe(2000)
    expect(calls()).toBeLessThan(200)
  })

  it('counts a request at a time near the limit, so a second instance still gets the rest', async () => {
    const first = new ClusterRateLimiter(a.guards)
    const second = new ClusterRateLimiter(b.guards)
    let allowed = 0
    for (let i = 0; i < 7; i++) if ((await first.hit('p4', '10.0.0.2', 8)).allowed) allowed++
    for (let i = 0; i < 5; i++) if ((await second.hit('p4', '10.0.0.2', 8)).allowed) allowed++
    expect(allowed).toBe(8)
  })
})
