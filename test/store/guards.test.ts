// SPEC §12's store guards on both stores: SQLite (two connections to one file, as two processes)
// and PostgreSQL (two pools on one schema, as two instances) when FLOWCTL_TEST_DATABASE_URL is set.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe } from 'vitest'
import { openPostgresStore } from '../../src/store/postgres/index.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { PG_URL, pgSkipNotice } from '../pg-helpers.js'
import { describeGuardsContract } from './guards-contract.js'

const dir = await mkdtemp(join(tmpdir(), 'flowctl-guards-'))
afterAll(() => rm(dir, { recursive: true, force: true }))
const file = join(dir, 'flowctl.db')
describeGuardsContract(
  'sqlite (two connections to one file)',
  () => openSqliteStore(file),
  () => openSqliteStore(file),
)

pgSkipNotice('store guards contract')
const schema = `flowctl_guards_${randomBytes(5).toString('hex')}`
// Skipped without FLOWCTL_TEST_DATABASE_URL: this part needs a real PostgreSQL (notice printed above).
describe.skipIf(!PG_URL)('postgres', () => {
  afterAll(async () => {
    const client = new pg.Client({ connectionString: PG_URL })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await client.end()
  })
  describeGuardsContract(
    'postgres (two pools on one schema)',
    () => openPostgresStore(PG_URL!, { schema }),
    () => openPostgresStore(PG_URL!, { schema }),
  )
})
