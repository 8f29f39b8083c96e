// The parked-runs contract on SQLite and, when FLOWCTL_TEST_DATABASE_URL is set, on PostgreSQL in a
// fresh schema dropped afterwards.
import { describeOnBothStores } from './both-stores.js'
import { describeWaitsContract } from './waits-contract.js'

await describeOnBothStores('parked-runs store contract', describeWaitsContract)
