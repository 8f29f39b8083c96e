// A store contract run on both stores: SQLite (two connections to one file, as two processes) and,
// when FLOWCTL_TEST_DATABASE_URL is set, PostgreSQL (two pools on one fresh schema, dropped
// afterwards, as two instances). Without PostgreSQL its part is skipped with a printed notice.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, describe } from 'vitest'
import type { Store } from '../../src/model/store.js'
import { openPostgresStore } from '../../src/store/postgres/index.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { PG_URL, pgSkipNotice } from '../pg-helpers.js'

type DescribeContract = (name: string, open: () => Promise<Store>, openSecond: () => Promise<Store>) => void

export async function describeOnBothStores(
  suite: string,
  contract: DescribeContract,
  names: { sqlite: string; postgres: string } = { sqlite: 'sqlite (file, WAL)', postgres: 'postgres' },
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'flowctl-contract-'))
  afterAll(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'flowctl.db')
  contract(
    names.sqlite,
    () => openSqliteStore(file),
    () => openSqliteStore(file),
  )

  pgSkipNotice(suite)
  const schema = `flowctl_contract_${randomBytes(6).toString('hex')}`
  describe.skipIf(!PG_URL)('postgres', () => {
    afterAll(async () => {
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await client.end()
    })
    contract(
      names.postgres,
      () => openPostgresStore(PG_URL!, { schema }),
      () => openPostgresStore(PG_URL!, { schema }),
    )
  })
}
