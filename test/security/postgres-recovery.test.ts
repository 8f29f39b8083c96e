// Issue 20 on PostgreSQL: a database URL from a secret never shows in CLI errors (its role and
// database names are parts of the secret), and `serve` recovers after backends are terminated or
// the database is dropped and created again, logging once why runs answer 503 (without secrets).
// Each test counts the log lines written since it began: an earlier outage's lines are not its own.
// Needs FLOWCTL_TEST_DATABASE_URL; without it, it skips with a notice.
import { randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, eventually, flowctl, startServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

pgSkipNotice('security: PostgreSQL errors and recovery')

const PASSWORD = `pw-${randomBytes(6).toString('hex')}`

async function projectWithDatabaseSecret(url: string): Promise<string> {
  const dir = await copyFixture('example')
  const file = join(dir, 'flowctl.yaml')
  await writeFile(file, (await readFile(file, 'utf8')).replace('database: embedded', 'database: "${secrets.DATABASE_URL}"'))
  await writeFile(join(dir, '.env'), `ORDERS_TOKEN=dev-orders-token-change-me\nDATABASE_URL=${url}\n`)
  return dir
}

async function admin<T>(work: (client: import('pg').Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

const quote = (base: string) =>
  fetch(`${base}/api/run/shop/quote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ sku: 'P', price: 1 }] }),
  })

describe.skipIf(!PG_URL)('PostgreSQL errors keep a database secret hidden', () => {
  afterAll(cleanupTempDirs)

  it.each([
    [
      'a database name',
      (hidden: string) => {
        const u = new URL(PG_URL!)
        u.pathname = `/${hidden}`
        return u
      },
    ],
    [
      'a role name',
      (hidden: string) => {
        const u = new URL(PG_URL!)
        u.username = hidden
        return u
      },
    ],
  ])('when the secret URL names %s that does not exist', async (_, build) => {
    const hidden = `hidden_${randomBytes(5).toString('hex')}`
    const url = build(hidden)
    url.password = PASSWORD
    const project = await projectWithDatabaseSecret(url.toString())
    const result = await flowctl(['history', '--project', project])
    const output = result.stdout + result.stderr
    expect(result.exitCode).not.toBe(0)
    expect(output).toContain('PostgreSQL')
    expect(output).not.toContain(hidden)
    expect(output).not.toContain(PASSWORD)
  })
})

describe.skipIf(!PG_URL)('serve recovers when PostgreSQL comes back', () => {
  let db: { url: string; drop: () => Promise<void> }
  let name: string
  let server: ResultPromise
  let base: string
  /** What serve wrote so far, stdout and stderr. */
  let output = () => ''

  beforeAll(async () => {
    db = await createTestDatabase()
    const url = new URL(db.url)
    name = url.pathname.slice(1)
    url.password = PASSWORD
    const project = await projectWithDatabaseSecret(url.toString())
    const started = await startServe([project, '--no-watch'])
    server = started.child
    base = started.base
    output = started.output
  })

  afterAll(async () => {
    server?.kill('SIGTERM')
    await server?.catch(() => {})
    await db?.drop()
    await cleanupTempDirs()
  })

  /** How often `pattern` occurs in what serve wrote after `from` (an earlier `output().length`). */
  const linesSince = (from: number, pattern: RegExp) => output().slice(from).match(pattern)?.length ?? 0

  it('answers again after its connections are terminated under traffic; any blip is logged with its end', async () => {
    expect((await quote(base)).status).toBe(200)
    const from = output().length
    // Runs in flight while the connections go: one may lose its connection (503), and the next one
    // answered logs the store back. So the test below counts only what it caused itself.
    let stop = false
    const statuses: number[] = []
    const tracked = async () => {
      const { status } = await quote(base)
      statuses.push(status)
      return status
    }
    const client = async () => {
      while (!stop) await tracked()
    }
    const clients = [client(), client(), client()]
    try {
      const terminated = await admin((client) =>
        client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]),
      )
      expect(terminated.rowCount).toBeGreaterThan(0)
      await eventually(async () => (await tracked()) === 200, 10_000, 200)
    } finally {
      stop = true
      await Promise.all(clients)
    }
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([])
    // Only a run that began after an outage was logged logs the store back; every run above may have
    // begun before, so one more (every answer is in, so any outage line was written before it began).
    expect((await quote(base)).status).toBe(200)
    // Every outage line has its recovery line (the lines reach this process after the answers).
    const blip = statuses.includes(503)
    await eventually(async () => {
      const outages = linesSince(from, /store of project shop is unavailable/g)
      return outages > 0 === blip && linesSince(from, /store of project shop is back/g) === outages
    }, 5_000)
  })

  it('answers 503 while the database is gone, logs why once, and recovers when it is created again', async () => {
    const from = output().length
    await admin((client) => client.query(`DROP DATABASE ${name} WITH (FORCE)`))
    const statuses = [(await quote(base)).status, (await quote(base)).status]
    expect(statuses).toEqual([503, 503])
    await eventually(async () => output().includes('store of project shop is unavailable'), 5_000)
    expect(linesSince(from, /store of project shop is unavailable/g)).toBe(1)
    await admin((client) => client.query(`CREATE DATABASE ${name}`))
    await eventually(async () => (await quote(base)).status === 200, 15_000, 250)
    await eventually(async () => linesSince(from, /store of project shop is back/g) === 1, 5_000)
    expect(output()).not.toContain(PASSWORD)
    expect(output()).not.toContain(name)
  })
})
