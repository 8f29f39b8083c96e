import Database from 'better-sqlite3'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { runValues } from '../../src/store/rows.js'
import { SQLITE_MIGRATIONS } from '../../src/store/migrations/sqlite.js'
import { describeStoreContract, makeRun } from './contract.js'
import { bindFilter, parseFilter } from '../../src/model/document-filter.js'
import { documentIndexName } from '../../src/store/documents.js'
import { compileSort, SQLITE_DIALECT } from '../../src/store/filter-sql.js'
import { documentsWhere } from '../../src/store/sqlite/documents.js'

/** Runs `action` while another connection (as another process would) holds the write lock. */
async function whileWriteLockHeld<T>(file: string, action: () => Promise<T>): Promise<T> {
  const holder = new Database(file)
  holder.exec('BEGIN IMMEDIATE')
  try {
    return await action()
  } finally {
    holder.exec('ROLLBACK')
    holder.close()
  }
}

/** Each settled promise as its error code, or 'resolved'. */
function outcomes(results: PromiseSettledResult<unknown>[]): (string | undefined)[] {
  return results.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'resolved'))
}

const dir = await mkdtemp(join(tmpdir(), 'flowctl-sqlite-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

const file = join(dir, 'contract', 'flowctl.db')
describeStoreContract(
  'sqlite (file, WAL)',
  () => openSqliteStore(file),
  () => openSqliteStore(file),
)

describe('sqlite store', () => {
  it('creates the parent folder and uses WAL', async () => {
    const nested = join(dir, 'a', 'b', '.flowctl', 'flowctl.db')
    const store = await openSqliteStore(nested)
    await store.history.recordRun(makeRun('p'), 10)
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

  it('upgrades a version-1 database in place: its runs stay, with scheduledFor null', async () => {
    const old = join(dir, 'version-1.db')
    const raw = new Database(old)
    raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
    raw.exec((SQLITE_MIGRATIONS[0] as { sql: string }).sql)
    raw.prepare('INSERT INTO schema_migrations VALUES (1, ?)').run(new Date().toISOString())
    const kept = makeRun('p')
    raw.prepare('INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(...runValues(kept, undefined).slice(0, 12))
    raw.close()
    const store = await openSqliteStore(old)
    expect(await store.history.getRun('p', kept.id)).toStrictEqual({ ...kept, scheduledFor: null, replayOf: null, input: null, trace: null })
    const scheduled = makeRun('p', { trigger: 'cron', method: 'CRON', scheduledFor: '2026-11-23T10:00:00.000Z' })
    await store.history.recordRun(scheduled, 10)
    expect(await store.history.getRun('p', scheduled.id)).toStrictEqual({ ...scheduled, input: null, trace: null })
    await store.close()
  })

  it('answers STORE_UNAVAILABLE when another process holds the write lock past busy_timeout (5 s)', async () => {
    const shared = join(dir, 'locked.db')
    const store = await openSqliteStore(shared)
    await whileWriteLockHeld(shared, () => expect(store.history.recordRun(makeRun('p'), 10)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' }))
    // Reads are never blocked by a writer in WAL mode, and writes work again once the lock is gone.
    const run = makeRun('p')
    await store.history.recordRun(run, 10)
    expect(await store.history.getRun('p', run.id)).toStrictEqual({ ...run, input: null, trace: null })
    await store.close()
  }, 20_000)

  it('rejects every caller of a group commit that fails, and commits none of their writes', async () => {
    const shared = join(dir, 'failing-batch.db')
    const store = await openSqliteStore(shared)
    const runs = Array.from({ length: 100 }, () => makeRun('p'))
    const results = await whileWriteLockHeld(shared, () =>
      Promise.allSettled([...runs.map((run) => store.history.recordRun(run, 1000)), store.documents.insert('p', 'c', { a: 1 })]),
    )
    expect(outcomes(results)).toEqual(Array(101).fill('STORE_UNAVAILABLE'))
    expect(await store.history.countRuns('p', null, null)).toEqual({ success: 0, error: 0 })
    await store.close()
  }, 20_000)

  it("fails only the caller whose row is refused (duplicate id), with SQLite's code", async () => {
    const store = await openSqliteStore(join(dir, 'duplicate.db'))
    const run = makeRun('p')
    await store.history.recordRun(run, 10)
    const other = makeRun('p')
    const results = await Promise.allSettled([store.history.recordRun(run, 10), store.history.recordRun(other, 10)])
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' } })
    expect(results[1].status).toBe('fulfilled')
    expect(await store.history.getRun('p', other.id)).toStrictEqual({ ...other, input: null, trace: null })
    await store.close()
  })

  it('commits every accepted write before close returns', async () => {
    const shared = join(dir, 'close.db')
    const store = await openSqliteStore(shared)
    const runs = Array.from({ length: 500 }, () => makeRun('p'))
    const writes = runs.map((run) => store.history.recordRun(run, 10_000))
    await store.close()
    await Promise.all(writes)
    const raw = new Database(shared, { readonly: true })
    expect((raw.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n).toBe(500)
    raw.close()
    // Nothing is left running: a fresh store on the file opens and writes at once.
    const again = await openSqliteStore(shared)
    await again.history.recordRun(makeRun('p'), 10_000)
    await again.close()
  })

  it('refuses writes as STORE_UNAVAILABLE once closed', async () => {
    const shared = join(dir, 'closed.db')
    const store = await openSqliteStore(shared)
    await store.history.recordRun(makeRun('p'), 10)
    await store.close()
    await expect(store.history.recordRun(makeRun('p'), 10)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    const raw = new Database(shared, { readonly: true })
    expect((raw.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n).toBe(1)
    raw.close()
  })

  it('answers an equality find on an indexed field from the expression index, for count and page', async () => {
    const path = join(dir, 'index-plan', 'flowctl.db')
    const store = await openSqliteStore(path)
    await store.documents.ensureIndexes({ orders: [['status'], ['customer', 'id']] })
    await store.close()
    const raw = new Database(path, { readonly: true })
    try {
      for (const [field, value] of [
        [['status'], 'open'],
        [['customer', 'id'], 7],
      ] as const) {
        const { where, values } = documentsWhere(
          'p',
          'orders',
          bindFilter(parseFilter({ [field.join('.')]: value }).filter, (v) => v),
        )
        const order = compileSort([], SQLITE_DIALECT, 'ASC')
        for (const sql of [`SELECT count(*) FROM documents WHERE ${where}`, `SELECT id, body FROM documents WHERE ${where} ORDER BY ${order} LIMIT 100`]) {
          const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as { detail: string }[]).map((r) => r.detail).join('; ')
          expect(plan).toMatch(new RegExp(`USING (COVERING )?INDEX ${documentIndexName(field)} \\(<expr>=\\? AND project_id=\\? AND collection=\\?\\)`))
          expect(plan).not.toContain('TEMP B-TREE') // insertion order (rowid) comes with the index: no sort step
        }
      }
    } finally {
      raw.close()
    }
  })

  // better-sqlite3's SQLite has STAT4: once a database has been ANALYZEd, a statement whose bound values
  // could change its plan is planned again on every run with new values, which made an indexed find
  // cost ~3× its lookup. The plan must come from the SQL text alone: the same for any values.
  it('plans a find from its SQL alone, the same for any values, after ANALYZE', async () => {
    const path = join(dir, 'stable-plan', 'flowctl.db')
    const store = await openSqliteStore(path)
    await store.documents.ensureIndexes({ orders: [['x'], ['y']] })
    // x is rare for the first few documents, y for the last few: with the values in view a planner
    // would pick the index of whichever value is rare.
    for (let i = 0; i < 300; i += 1) await store.documents.insert('p', 'orders', { x: i < 3 ? 'rare' : 'common', y: i >= 297 ? 'rare' : 'common' })
    await store.close()
    const raw = new Database(path)
    try {
      raw.exec('ANALYZE')
      const plans = [
        ['rare', 'common'],
        ['common', 'rare'],
      ].map(([x, y]) => {
        const { where, values } = documentsWhere(
          'p',
          'orders',
          bindFilter(parseFilter({ x, y }).filter, (v) => v),
        )
        const statement = raw.prepare(`EXPLAIN QUERY PLAN SELECT id, body FROM documents WHERE ${where} ORDER BY rowid LIMIT 100`)
        return (statement.all(...values) as { detail: string }[]).map((r) => r.detail).join('; ')
      })
      expect(plans[0]).toMatch(/USING INDEX documents_by_[xy]_/)
      expect(plans[1]).toBe(plans[0])
    } finally {
      raw.close()
    }
  })

  it('works in memory', async () => {
    const store = await openSqliteStore(':memory:')
    const run = makeRun('mem')
    await store.history.recordRun(run, 10)
    expect(await store.history.getRun('mem', run.id)).toStrictEqual({ ...run, input: null, trace: null })
    await store.close()
  })

  it('reports a file it cannot create as STORE_UNAVAILABLE', async () => {
    // A regular file where the folder should be.
    const blocker = join(dir, 'not-a-folder')
    await writeFile(blocker, 'x')
    await expect(openSqliteStore(join(blocker, '.flowctl', 'flowctl.db'))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
  })
})
