// The parked-runs contract on SQLite and, when FLOWCTL_TEST_DATABASE_URL is set, on PostgreSQL in a
// fresh schema dropped afterwards.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe } from 'vitest'
import { openPostgresStore } from '../../src/store/postgres/index.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { describeWaitsContract } from './waits-contract.js'

const dir = await mkdtemp(join(tmpdir(), 'flowctl-waits-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

const file = join(dir, 'waits', 'flowctl.db')
describeWaitsContract(
  'sqlite (file, WAL)',
  () => openSqliteStore(file),
  () => openSqliteStore(file),
)

const url = process.env.FLOWCTL_TEST_DATABASE_URL
if (!url) console.warn('PostgreSQL parked-runs suite skipped: set FLOWCTL_TEST_DATABASE_URL=postgres://... to run it')
const schema = `flowctl_waits_${randomBytes(6).toString('hex')}`

describe.skipIf(!url)('postgres', () => {
  afterAll(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await client.end()
  })
  describeWaitsContract(
    'postgres',
    () => openPostgresStore(url!, { schema }),
    () => openPostgresStore(url!, { schema }),
  )
})
