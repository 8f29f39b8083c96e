// SPEC §12's store guards on both stores: SQLite (two connections to one file, as two processes)
// and PostgreSQL (two pools on one schema, as two instances) when FLOWCTL_TEST_DATABASE_URL is set.
import { describeOnBothStores } from './both-stores.js'
import { describeGuardsContract } from './guards-contract.js'

await describeOnBothStores('store guards contract', describeGuardsContract, {
  sqlite: 'sqlite (two connections to one file)',
  postgres: 'postgres (two pools on one schema)',
})
