// Runs the store contract against a real PostgreSQL when FLOWCTL_TEST_DATABASE_URL is set, in a
// fresh schema that is dropped afterwards.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { POSTGRES_MIGRATIONS } from '../../src/store/migrations/postgres.js'
import { openPostgresStore } from '../../src/store/postgres/index.js'
import { PG_SQL, TRIM_PLANNER_SETTINGS } from '../../src/store/postgres/sql.js'
import type { Store } from '../../src/model/store.js'
import { describeStoreContract, makeRun } from './contract.js'
import { bindFilter, parseFilter } from '../../src/model/document-filter.js'
import { documentIndexName } from '../../src/store/documents.js'
import { compileFilter, POSTGRES_DIALECT, SqlParams } from '../../src/store/filter-sql.js'

const url = process.env.FLOWCTL_TEST_DATABASE_URL
const schema = `flowctl_test_${randomBytes(6).toString('hex')}`

if (!url) console.warn('PostgreSQL store suite skipped: set FLOWCTL_TEST_DATABASE_URL=postgres://... to run it')

async function dropSchema(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
  } finally {
    await client.end()
  }
}

// Skipped only when no PostgreSQL server is configured: this suite needs a real database.
describe.skipIf(!url)('postgres store', () => {
  afterAll(() => dropSchema(schema))

  describeStoreContract(
    'postgres',
    () => openPostgresStore(url!, { schema }),
    () => openPostgresStore(url!, { schema }),
  )

  it('applies each migration once when several instances open a new schema at once', async () => {
    const fresh = `${schema}_m`
    try {
      const stores: Store[] = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore(url!, { schema: fresh })))
      const run = makeRun('p')
      await stores[0]!.history.recordRun(run, 10)
      expect(await stores[3]!.history.getRun('p', run.id)).toStrictEqual({ ...run, input: null, trace: null })
      await Promise.all(stores.map((s) => s.close()))
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      const { rows } = await client.query(`SELECT version FROM "${fresh}".schema_migrations ORDER BY version`)
      await client.end()
      expect(rows.map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version))
    } finally {
      await dropSchema(fresh)
    }
  })

  it('rejects every caller of a group commit that fails', async () => {
    const fresh = `${schema}_f`
    const store = await openPostgresStore(url!, { schema: fresh })
    try {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query(`ALTER TABLE "${fresh}".runs RENAME TO runs_gone`)
      await client.end()
      const results = await Promise.allSettled(Array.from({ length: 100 }, () => store.history.recordRun(makeRun('p'), 1000)))
      expect(results.filter((r) => r.status === 'rejected')).toHaveLength(100)
    } finally {
      await store.close()
      await dropSchema(fresh)
    }
  })

  it('plans the history trim as an index scan even on a table never analyzed (no sort of the whole project)', async () => {
    const fresh = `${schema}_t`
    const store = await openPostgresStore(url!, { schema: fresh })
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${fresh}` })
    await client.connect()
    try {
      // 30,000 runs written at once, as a busy project does before autoanalyze has looked at the table.
      await client.query(`INSERT INTO runs (id, project_id, flow, "trigger", method, started_at, duration_ms, status, http_status, ports)
        SELECT 'r' || g, 'p', 'f', 'http', 'POST', now() - g * interval '1 ms', 1, 'success', 200, '[]'::jsonb FROM generate_series(1, 30000) g`)
      const plan = async (settings: string) => {
        await client.query(`BEGIN; ${settings}`)
        await client.query(`PREPARE trim_plan(text, int) AS ${PG_SQL.trimRuns}`)
        const { rows } = await client.query("EXPLAIN (FORMAT JSON) EXECUTE trim_plan('p', 10000)")
        await client.query('ROLLBACK')
        return JSON.stringify(rows[0]['QUERY PLAN'])
      }
      const trimPlan = await plan(TRIM_PLANNER_SETTINGS)
      expect(trimPlan).toMatch(/"Index (Only )?Scan/)
      expect(trimPlan).not.toMatch(/"Node Type":"(Sort|Bitmap Heap Scan)"/)
    } finally {
      await client.end()
      await store.close()
      await dropSchema(fresh)
    }
  })

  it('answers an equality find on an indexed field from the expression index', async () => {
    const fresh = `${schema}_i`
    const store = await openPostgresStore(url!, { schema: fresh })
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${fresh}` })
    await client.connect()
    try {
      await store.documents.ensureIndexes({ orders: [['status']] })
      await client.query(`INSERT INTO documents (id, project_id, collection, body)
        SELECT 'd' || g, 'p', 'orders', jsonb_build_object('status', 's' || g) FROM generate_series(1, 20000) g`)
      await client.query('ANALYZE documents')
      const params = new SqlParams(POSTGRES_DIALECT, ['p', 'orders'])
      const where = `project_id = $1 AND collection = $2 AND ${compileFilter(
        bindFilter(parseFilter({ status: 's77' }).filter, (v) => v),
        params,
      )}`
      const { rows } = await client.query(
        `EXPLAIN (FORMAT JSON) SELECT id, body, count(*) OVER () FROM documents WHERE ${where} ORDER BY created_at, id LIMIT 100`,
        params.values,
      )
      expect(JSON.stringify(rows[0]['QUERY PLAN'])).toContain(`"Index Name":"${documentIndexName(['status'])}"`)
    } finally {
      await client.end()
      await store.close()
      await dropSchema(fresh)
    }
  })

  it('rejects a schema name that is not a plain identifier', async () => {
    await expect(openPostgresStore(url!, { schema: 'x; DROP TABLE runs' })).rejects.toMatchObject({ code: 'USAGE' })
  })
})

describe('postgres store without a server', () => {
  it('reports an unreachable server without the password', async () => {
    const error = await openPostgresStore('postgres://flow:sekret-pw@127.0.0.1:1/x').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' })
    const message = (error as Error).message
    expect(message).toBe('cannot reach PostgreSQL at 127.0.0.1:1 (ECONNREFUSED)')
    expect(JSON.stringify(error)).not.toContain('sekret')
    expect(String((error as Error).stack)).not.toContain('sekret')
  })

  it('rejects a URL it cannot parse without echoing it', async () => {
    const error = await openPostgresStore('postgres://u:sekret@[bad').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'USAGE' })
    expect((error as Error).message).not.toContain('sekret')
  })
})
