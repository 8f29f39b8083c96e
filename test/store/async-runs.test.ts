// The async-run queue contract on SQLite and, when FLOWCTL_TEST_DATABASE_URL is set, on PostgreSQL
// in a fresh schema dropped afterwards.
import { describeAsyncRunsContract } from './async-runs-contract.js'
import { describeOnBothStores } from './both-stores.js'

await describeOnBothStores('async-run queue contract', describeAsyncRunsContract)
