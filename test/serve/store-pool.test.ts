// The store pool of `serve`: one open at a time per project, a timeout that closes a store opening
// late, the retry interval, and closing while an open is under way.
import { describe, expect, it } from 'vitest'
import type { Project } from '../../src/model/project.js'
import type { Store } from '../../src/model/store.js'
import { StorePool } from '../../src/serve/store-pool.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'

const project = { settings: { projectId: 'shop' } } as unknown as Project

/** A real in-memory store whose close() is counted. */
async function countedStore(closed: { count: number }): Promise<Store> {
  const store = await openSqliteStore(':memory:')
  const close = store.close.bind(store)
  store.close = async () => {
    closed.count++
    await close()
  }
  return store
}

describe('StorePool', () => {
  it('shares one attempt between concurrent callers', async () => {
    let opens = 0
    const closed = { count: 0 }
    const pool = new StorePool(async () => {
      opens++
      await new Promise((resolve) => setTimeout(resolve, 20))
      return countedStore(closed)
    })
    const [a, b] = await Promise.all([pool.attempt('shop', project), pool.attempt('shop', project)])
    expect(opens).toBe(1)
    expect(a.store).not.toBeNull()
    expect(b.store).toBe(a.store)
    await a.store?.close()
  })

  it('fails an open past the timeout, and closes the store when it arrives late', async () => {
    const closed = { count: 0 }
    let arrived!: () => void
    const late = new Promise<void>((resolve) => (arrived = resolve))
    const pool = new StorePool(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 150))
        const store = await countedStore(closed)
        arrived()
        return store
      },
      { openTimeoutMs: 20 },
    )
    const outcome = await pool.attempt('shop', project)
    expect(outcome.store).toBeNull()
    expect(String(outcome.error)).toContain('opening the store took longer than 20 ms')
    await late
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(closed.count).toBe(1)
  })

  it('allows a new attempt only once the retry interval has passed', async () => {
    let now = 1_000_000
    const pool = new StorePool(() => Promise.reject(new Error('ECONNREFUSED')), { retryMs: 5_000, now: () => now })
    expect(pool.mayAttempt('shop')).toBe(true)
    const outcome = await pool.attempt('shop', project)
    expect(String(outcome.error)).toContain('ECONNREFUSED')
    now += 4_999
    expect(pool.mayAttempt('shop')).toBe(false)
    now += 1
    expect(pool.mayAttempt('shop')).toBe(true)
  })

  it('closes a store that finishes opening after the pool was closed', async () => {
    const closed = { count: 0 }
    const pool = new StorePool(async () => {
      await new Promise((resolve) => setTimeout(resolve, 30))
      return countedStore(closed)
    })
    const attempt = pool.attempt('shop', project)
    await pool.close()
    expect((await attempt).store).toBeNull()
    expect(closed.count).toBe(1)
  })
})
