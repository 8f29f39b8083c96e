import Database from 'better-sqlite3'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite.js'
import { SQLITE_MIGRATIONS } from '../../src/store/migrations/sqlite.js'
import { describeStoreContract, makeRun } from './contract.js'

const dir = await mkdtemp(join(tmpdir(), 'flowctl-sqlite-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

const file = join(dir, 'contract', 'flowctl.db')
describeStoreContract('sqlite (file, WAL)', () => openSqliteStore(file), () => openSqliteStore(file))

describe('sqlite store', () => {
  it('creates the parent folder and uses WAL', async () => {
    const nested = join(dir, 'a', 'b', '.flowctl', 'flowctl.db')
    const store = await openSqliteStore(nested)
    await store.recordRun(makeRun('p'), 10)
    expect(existsSync(nested)).toBe(true)
    const raw = new Database(nested, { readonly: true })
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal')
    raw.close()
    await store.close()
  })

  it('applies each migration once however often the file is opened', async () => {
    const shared = join(dir, 'reopen.db')
    const stores = await Promise.all([openSqliteStore(shared), openSqliteStore(shared), openSqliteStore(shared)])
    await Promise.all(stores.map((s) => s.close()))
    const again = await openSqliteStore(shared)
    await again.close()
    const raw = new Database(shared, { readonly: true })
    const versions = raw.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]
    expect(versions.map((v) => v.version)).toEqual(SQLITE_MIGRATIONS.map((m) => m.version))
    raw.close()
  })

  it('answers STORE_UNAVAILABLE when another process holds the write lock past busy_timeout (5 s)', async () => {
    const shared = join(dir, 'locked.db')
    const store = await openSqliteStore(shared)
    const holder = new Database(shared)
    holder.exec('BEGIN IMMEDIATE')
    try {
      await expect(store.recordRun(makeRun('p'), 10)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    } finally {
      holder.exec('ROLLBACK')
      holder.close()
    }
    // Reads are never blocked by a writer in WAL mode, and writes work again once the lock is gone.
    const run = makeRun('p')
    await store.recordRun(run, 10)
    expect(await store.getRun('p', run.id)).toStrictEqual(run)
    await store.close()
  }, 20_000)

  it('rejects every caller of a group commit that fails, and commits none of their writes', async () => {
    const shared = join(dir, 'failing-batch.db')
    const store = await openSqliteStore(shared)
    const holder = new Database(shared)
    holder.exec('BEGIN IMMEDIATE')
    const runs = Array.from({ length: 100 }, () => makeRun('p'))
    let results: PromiseSettledResult<unknown>[]
    try {
      results = await Promise.allSettled([...runs.map((run) => store.recordRun(run, 1000)), store.insertDocument('p', 'c', { a: 1 })])
    } finally {
      holder.exec('ROLLBACK')
      holder.close()
    }
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'resolved'))).toEqual(Array(101).fill('STORE_UNAVAILABLE'))
    expect(await store.countRuns('p', null, null)).toEqual({ success: 0, error: 0 })
    await store.close()
  }, 20_000)

  it('works in memory', async () => {
    const store = await openSqliteStore(':memory:')
    const run = makeRun('mem')
    await store.recordRun(run, 10)
    expect(await store.getRun('mem', run.id)).toStrictEqual(run)
    await store.close()
  })

  it('reports a file it cannot create as STORE_UNAVAILABLE', async () => {
    // A regular file where the folder should be.
    const blocker = join(dir, 'not-a-folder')
    await writeFile(blocker, 'x')
    await expect(openSqliteStore(join(blocker, '.flowctl', 'flowctl.db'))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
  })
})
