// PostgreSQL for tests: a fresh database per test file, dropped afterwards.
// Runs only when FLOWCTL_TEST_DATABASE_URL is set (CI sets it); otherwise suites print a notice and skip.
import { randomBytes } from 'node:crypto'

export const PG_URL = process.env.FLOWCTL_TEST_DATABASE_URL

export function pgSkipNotice(suite: string): void {
  if (!PG_URL) {
    console.warn(`[flowctl] ${suite}: PostgreSQL part skipped — set FLOWCTL_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it`)
  }
}

/** Creates an empty database next to the one in FLOWCTL_TEST_DATABASE_URL; returns its URL and a drop function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!PG_URL) throw new Error('FLOWCTL_TEST_DATABASE_URL is not set')
  const { default: pg } = await import('pg')
  const name = `flowctl_e2e_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(PG_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    },
  }
}
