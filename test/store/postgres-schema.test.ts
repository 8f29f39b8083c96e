// `database.schema`: flowctl's PostgreSQL tables live in their own schema (default `flowctl`), and a
// database where an earlier flowctl kept them in `public` has them moved there, history and all.
import { afterAll, describe, expect, it } from 'vitest'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DEFAULT_LIMITS, type Project } from '../../src/model/project.js'
import { validateProject } from '../../src/project/validate.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { openPostgresStore } from '../../src/store/postgres/index.js'
import { cleanupTempDirs, copyFixture } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'
import { makeRun } from './contract.js'

pgSkipNotice('database.schema')

function project(database: string, databaseSchema?: string): Project {
  return {
    dir: '/nonexistent',
    settings: {
      projectId: 'shop',
      name: 'Shop',
      flows: 'flows',
      timezone: 'UTC',
      database,
      ...(databaseSchema ? { databaseSchema } : {}),
      secrets: '.env',
      limits: DEFAULT_LIMITS,
      notify: { channels: {}, alerts: [], digests: [] },
      indexes: {},
      trace: 'loopback',
      history: { keep: 'all' },
    },
    flows: new Map(),
    secrets: new Map(),
    problems: [],
  }
}

afterAll(cleanupTempDirs)

describe('database in flowctl.yaml', () => {
  it('takes { url, schema } and checks the schema name', async () => {
    const dir = await copyFixture('example')
    const settings = join(dir, 'flowctl.yaml')
    const { readFile } = await import('node:fs/promises')
    const text = await readFile(settings, 'utf8')
    await writeFile(settings, text.replace('database: embedded', 'database: { url: "postgres://db/x", schema: Flow-Tables }'))
    const result = await validateProject(dir, { env: {} })
    expect(result.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual(['6:45 database.schema must match the pattern ^[a-z_][a-z0-9_]{0,62}$'])
    await writeFile(settings, text.replace('database: embedded', 'database: { url: "postgres://db/x", schema: app_flows }'))
    const { loadProject } = await import('../../src/project/load.js')
    const loaded = await loadProject(dir, { env: {} })
    expect(loaded.settings).toMatchObject({ database: 'postgres://db/x', databaseSchema: 'app_flows' })
    await writeFile(settings, text)
    expect((await loadProject(dir, { env: {} })).settings).toMatchObject({ database: 'embedded', databaseSchema: 'flowctl' })
  })
})

describe.skipIf(!PG_URL)('database.schema on PostgreSQL', () => {
  const drops: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const drop of drops) await drop()
  })
  async function freshDatabase(): Promise<string> {
    const { url, drop } = await createTestDatabase()
    drops.push(drop)
    return url
  }
  async function tablesOf(url: string): Promise<string[]> {
    const { default: pg } = await import('pg')
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const { rows } = await client.query<{ name: string }>(
        `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
          WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
      )
      return rows.map((row) => row.name)
    } finally {
      await client.end()
    }
  }

  it('keeps every table in the flowctl schema by default, none in public', async () => {
    const url = await freshDatabase()
    const store = await openProjectStore(project(url), { env: {} })
    await store.history.recordRun(makeRun('shop', { id: 'r1' }), 100)
    expect((await store.history.listRuns({ projectId: 'shop' })).map((run) => run.id)).toEqual(['r1'])
    await store.close()
    const tables = await tablesOf(url)
    expect(tables.filter((name) => name.startsWith('public.'))).toEqual([])
    expect(tables).toContain('flowctl.runs')
    expect(tables).toContain('flowctl.schema_migrations')
  })

  it('uses the schema named by database.schema', async () => {
    const url = await freshDatabase()
    const store = await openProjectStore(project(url, 'app_flows'), { env: {} })
    await store.close()
    expect(await tablesOf(url)).toContain('app_flows.runs')
  })

  it("moves an earlier flowctl's tables from public into the schema, with their history", async () => {
    const url = await freshDatabase()
    const old = await openPostgresStore(url) // what the previous version did: everything in public
    await old.history.recordRun(makeRun('shop', { id: 'old-run' }), 100)
    await old.close()
    expect(await tablesOf(url)).toContain('public.runs')

    const store = await openProjectStore(project(url), { env: {} })
    expect((await store.history.listRuns({ projectId: 'shop' })).map((run) => run.id)).toEqual(['old-run'])
    await store.history.recordRun(makeRun('shop', { id: 'new-run' }), 100)
    expect((await store.history.listRuns({ projectId: 'shop' })).map((run) => run.id).sort()).toEqual(['new-run', 'old-run'])
    await store.close()
    const tables = await tablesOf(url)
    expect(tables.filter((name) => name.startsWith('public.'))).toEqual([])
  })

  it("leaves an application's own runs table in public alone", async () => {
    const url = await freshDatabase()
    const { default: pg } = await import('pg')
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query('CREATE TABLE public.schema_migrations (version INTEGER)')
    await client.query('CREATE TABLE public.runs (id SERIAL, athlete TEXT, km REAL)')
    await client.end()
    const store = await openProjectStore(project(url), { env: {} })
    await store.history.recordRun(makeRun('shop', { id: 'r1' }), 100)
    await store.close()
    const tables = await tablesOf(url)
    expect(tables).toContain('public.runs')
    expect(tables).toContain('flowctl.runs')
  })
})
