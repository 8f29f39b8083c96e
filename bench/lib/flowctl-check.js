// Shared checks of the flowctl side: is it runnable, did history record the load, is PG reachable.
import { flowctlBuilt, flowctlSync } from './servers.js'

/** Throws a readable error when `npm run build` has not produced a runnable CLI yet. */
export function requireFlowctl() {
  if (!flowctlBuilt()) throw new Error('dist/bin/main.js is missing: run `npm run build` first')
}

/** `flowctl history --project DIR --json --limit 1` → the newest record, or null; throws on CLI failure. */
export function newestRun(projectDir, env = {}) {
  const result = flowctlSync(['history', '--project', projectDir, '--json', '--limit', '1'], { env })
  if (result.status !== 0) throw new Error(`flowctl history exited ${result.status}: ${result.stderr.trim() || result.stdout.trim()}`)
  const parsed = JSON.parse(result.stdout)
  const runs = Array.isArray(parsed) ? parsed : (parsed.runs ?? parsed.records ?? [])
  return runs[0] ?? null
}

/** The PostgreSQL URL of the benchmarks when a server answers there, else null. */
export async function reachablePostgres() {
  const url = process.env.FLOWCTL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
    return url
  } catch {
    return null
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * A fresh database beside the one at `url`, so every run starts from empty tables (a reused one
 * carries the dead rows and documents of earlier runs, which slows it down from run to run).
 */
export async function freshPostgresDatabase(url) {
  const { default: pg } = await import('pg')
  const { randomBytes } = await import('node:crypto')
  const name = `flowctl_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const fresh = new URL(url)
  fresh.pathname = `/${name}`
  return {
    url: fresh.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}
