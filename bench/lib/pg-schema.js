// A fresh PostgreSQL schema for one benchmark, dropped afterwards. Resolves to false (after logging)
// when the server does not answer, so the benchmark's PostgreSQL rows are left out, not failed.
import { randomBytes } from 'node:crypto'

export async function withBenchSchema(url, log, action) {
  const { default: pg } = await import('pg')
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await admin.connect()
  } catch {
    log('  PostgreSQL not reachable: skipped')
    return false
  }
  const schema = `flowctl_bench_${randomBytes(4).toString('hex')}`
  try {
    await action(schema, pg)
    return true
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {})
    await admin.end()
  }
}
