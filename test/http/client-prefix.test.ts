// SPEC §18: an IPv6 client is its /64 (one holder gets billions of addresses for free), an
// IPv4-mapped IPv6 address is its IPv4 address. One function (src/serve/client-group.ts) says so
// for the per-client socket cap, the instance rate limiter and the cluster rate limiter; and the
// cluster limiter never refuses a new client because many others came this minute.
import { EventEmitter } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientGroup, NOT_AN_ADDRESS } from '../../src/serve/client-group.js'
import { capConnectionsPerClient } from '../../src/serve/listen.js'
import { RateLimiter } from '../../src/http/rate-limit.js'
import { ClusterRateLimiter } from '../../src/http/cluster-rate-limit.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { openPostgresStore } from '../../src/store/postgres/index.js'
import type { Store } from '../../src/model/store.js'
import { PG_URL, pgSkipNotice } from '../pg-helpers.js'
import { awayFromMinuteEnd } from '../helpers.js'

pgSkipNotice('cluster rate limit with many addresses')

describe('clientGroup', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['0:0:0:0:0:ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::1.2.3.4', '64:ff9b:0:0::/64'],
    ['not an address', NOT_AN_ADDRESS],
    ['', NOT_AN_ADDRESS],
    ['unknown', NOT_AN_ADDRESS],
    ['1.2.3.4.5', NOT_AN_ADDRESS],
  ])('%s → %s', (address, group) => {
    expect(clientGroup(address)).toBe(group)
  })
})

describe('instance rate limiter by client group', () => {
  it('two addresses of one /64 share the limit; another /64 and the IPv4 mapped form behave as their own client', () => {
    const limiter = new RateLimiter(() => 0)
    expect(limiter.hit('p', '2001:db8:1:2::1', 2).allowed).toBe(true)
    expect(limiter.hit('p', '2001:db8:1:2::ffff', 2).allowed).toBe(true)
    expect(limiter.hit('p', '2001:db8:1:2:aaaa:bbbb:cccc:dddd', 2).allowed).toBe(false)
    expect(limiter.hit('p', '2001:db8:1:3::1', 2).allowed).toBe(true)
    expect(limiter.hit('p', '198.51.100.1', 2).allowed).toBe(true)
    expect(limiter.hit('p', '::ffff:198.51.100.1', 2).allowed).toBe(true)
    expect(limiter.hit('p', '::ffff:198.51.100.1', 2).allowed).toBe(false)
    expect(limiter.hit('p', '198.51.100.2', 2).allowed).toBe(true)
  })
})

/** A stand-in for a socket: its address, and whether the cap destroyed it. */
class FakeSocket extends EventEmitter {
  destroyed = false
  constructor(readonly remoteAddress: string) {
    super()
  }
  destroy(): void {
    this.destroyed = true
    this.emit('close')
  }
}

describe('per-client socket cap by client group', () => {
  it('counts every address of one /64 against one cap, and frees a place when a socket closes', () => {
    const server = new EventEmitter()
    capConnectionsPerClient(server as unknown as Server, 3)
    const arrive = (address: string) => {
      const socket = new FakeSocket(address)
      server.emit('connection', socket)
      return socket
    }
    const same = ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2::3', '2001:db8:1:2::4'].map(arrive)
    expect(same.map((s) => s.destroyed)).toEqual([false, false, false, true])
    // Another /64, and IPv4 (mapped or not), have caps of their own.
    expect(arrive('2001:db8:1:3::1').destroyed).toBe(false)
    const v4 = ['10.0.0.1', '::ffff:10.0.0.1', '10.0.0.1', '::ffff:10.0.0.1'].map(arrive)
    expect(v4.map((s) => s.destroyed)).toEqual([false, false, false, true])
    // One socket of the /64 closes: the next address of that /64 gets its place.
    same[0]!.destroy()
    expect(arrive('2001:db8:1:2::99').destroyed).toBe(false)
    expect(arrive('2001:db8:1:2::98').destroyed).toBe(true)
  })
})

/** The cluster limiter's rules on one store (SQLite here, PostgreSQL below). */
function clusterCases(open: () => Promise<{ store: Store; close: () => Promise<void> }>): void {
  let store: Store
  let close: () => Promise<void>
  beforeAll(async () => ({ store, close } = await open()))
  afterAll(() => close())

  it('never refuses a new client because of how many others came this minute', async () => {
    await awayFromMinuteEnd()
    // A small table (the default is 100,000) shows what a flood beyond it does.
    const limiter = new ClusterRateLimiter(store.guards, Date.now, 200)
    const project = `flood${randomBytes(3).toString('hex')}`
    for (let i = 0; i < 2_000; i++) {
      const decision = await limiter.hit(project, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 2)
      expect(decision.allowed).toBe(true)
    }
    expect(limiter.size).toBeLessThanOrEqual(200)
    expect(await limiter.hit(project, '198.51.100.77', 2)).toEqual({ allowed: true })
    expect(await limiter.hit(project, '2001:db8:77::1', 2)).toEqual({ allowed: true })
    // A client dropped from memory still has its count in the store: its limit holds.
    expect((await limiter.hit(project, '10.0.0.0', 2)).allowed).toBe(true)
    expect((await limiter.hit(project, '10.0.0.0', 2)).allowed).toBe(false)
  })

  it('counts the addresses of one /64 together, and another /64 apart', async () => {
    await awayFromMinuteEnd()
    const limiter = new ClusterRateLimiter(store.guards)
    const project = `six${randomBytes(3).toString('hex')}`
    expect((await limiter.hit(project, '2001:db8:5:6::1', 2)).allowed).toBe(true)
    expect((await limiter.hit(project, '2001:db8:5:6::2', 2)).allowed).toBe(true)
    expect((await limiter.hit(project, '2001:db8:5:6::3', 2)).allowed).toBe(false)
    expect((await limiter.hit(project, '2001:db8:5:7::1', 2)).allowed).toBe(true)
    // A second instance on the same store sees the /64's count.
    const other = new ClusterRateLimiter(store.guards)
    expect((await other.hit(project, '2001:db8:5:6:ffff::1', 2)).allowed).toBe(false)
  })
}

describe('cluster rate limiter on SQLite', () => {
  clusterCases(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-prefix-'))
    const store = await openSqliteStore(join(dir, 'flowctl.db'))
    return {
      store,
      close: async () => {
        await store.close()
        await rm(dir, { recursive: true, force: true })
      },
    }
  })
})

describe.skipIf(!PG_URL)('cluster rate limiter on PostgreSQL', () => {
  clusterCases(async () => {
    // A schema of its own, dropped afterwards (the database is shared with other test files).
    const schema = `net_${randomBytes(4).toString('hex')}`
    const store = await openPostgresStore(PG_URL!, { schema })
    return {
      store,
      close: async () => {
        await store.close()
        const { default: pg } = await import('pg')
        const admin = new pg.Client({ connectionString: PG_URL })
        await admin.connect()
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        await admin.end()
      },
    }
  })
})
