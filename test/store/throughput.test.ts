// Measures recordRun throughput: 10,000 runs one after another (each committed before the next),
// as the Run API records them. Prints runs/second; asserts only that every run landed and the cap
// held, never a time. Opt-in (FLOWCTL_STORE_THROUGHPUT=1) because it adds ~10 s or more to a run.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { openPostgresStore } from '../../src/store/postgres.js'
import { openSqliteStore } from '../../src/store/sqlite.js'
import type { Store } from '../../src/store/types.js'
import { makeRun } from './contract.js'

const enabled = process.env.FLOWCTL_STORE_THROUGHPUT === '1'
const pgUrl = process.env.FLOWCTL_TEST_DATABASE_URL
const RUNS = 10_000

async function measure(label: string, store: Store): Promise<void> {
  const runs = Array.from({ length: RUNS }, () => makeRun('bench', { ports: [{ nodeId: 'check', port: 'true' }] }))
  const started = performance.now()
  for (const run of runs) await store.recordRun(run, 10_000)
  const seconds = (performance.now() - started) / 1000
  console.log(`${label}: ${RUNS} recordRun calls in ${seconds.toFixed(2)} s = ${Math.round(RUNS / seconds)} runs/s`)
  expect(await store.countRuns('bench', null, null)).toEqual({ success: RUNS, error: 0 })
  // 150 more runs pass the cap: history is trimmed back and stays within its 1% margin.
  for (let i = 0; i < 150; i++) await store.recordRun(makeRun('bench'), 10_000)
  const { success } = await store.countRuns('bench', null, null)
  expect(success).toBeGreaterThanOrEqual(10_000)
  expect(success).toBeLessThanOrEqual(10_100)
}

// Opt-in: a measurement, not a check, and it takes long on a 2-core machine.
describe.skipIf(!enabled)('recordRun throughput', () => {
  it('sqlite (file, WAL, synchronous=NORMAL)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-throughput-'))
    const store = await openSqliteStore(join(dir, 'flowctl.db'))
    try {
      await measure('sqlite', store)
    } finally {
      await store.close()
      await rm(dir, { recursive: true, force: true })
    }
  }, 120_000)

  // Needs a PostgreSQL server as well.
  it.skipIf(!pgUrl)('postgres', async () => {
    const schema = `flowctl_bench_${randomBytes(4).toString('hex')}`
    const store = await openPostgresStore(pgUrl!, { schema })
    try {
      await measure('postgres', store)
    } finally {
      await store.close()
      const client = new pg.Client({ connectionString: pgUrl })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await client.end()
    }
  }, 300_000)
})
