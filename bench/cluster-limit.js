// `limits.rateLimitScope: cluster` against `instance` (SPEC §12): the same order flow on the same
// PostgreSQL database, with a rate limit high enough that nothing is refused, so the difference is
// what counting in the store costs. Target: cluster costs at most 1.2× instance (instance req/s ÷
// cluster req/s ≤ 1.2). Both servers run at once and are loaded alternately (A, B, A, B).
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { orderFlow, writeProject } from './lib/project.js'
import { startFlowctl } from './lib/servers.js'
import { stopChild } from './lib/proc.js'
import { alternate } from './lib/load.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { freshPostgresDatabase, reachablePostgres, requireFlowctl } from './lib/flowctl-check.js'
import { checkOrderResponse } from './run-api.js'
import { BENCH_TOKEN } from './lib/project.js'

const ROUTE = '/api/run/bench/create-order'
const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` }
/** Far above what 50 connections send in a minute: every request is counted, none refused. */
const LIMIT = 100_000_000

function writeScopeProject(scope) {
  return writeProject(join(TMP, `cluster-limit-${scope}`), {
    limits: { runsPerMinutePerIp: LIMIT, rateLimitScope: scope },
    flows: [{ file: 'create-order.yaml', flow: orderFlow() }],
  })
}

/** Inserts + updates of the rate_counts table (each upsert is one), from PostgreSQL's statistics; null when unknown. */
async function rateCountWrites(url) {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const { rows } = await client.query("SELECT (n_tup_ins + n_tup_upd)::int AS writes FROM pg_stat_user_tables WHERE relname = 'rate_counts'")
    return rows[0]?.writes ?? null
  } catch {
    return null
  } finally {
    await client.end()
  }
}

export async function run({ log = console.log } = {}) {
  const rows = []
  const notes = []
  log('[cluster-limit] rateLimitScope: cluster vs instance on PostgreSQL')
  requireFlowctl()
  const pgUrl = await reachablePostgres()
  if (!pgUrl) {
    const msg = 'skipped: no PostgreSQL answered at FLOWCTL_BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test'
    log('  ' + msg)
    return { name: 'cluster-limit', rows: [row('rateLimitScope: cluster vs instance', 'skipped', '—', '—', '≤ 1.20×', null)], notes: [msg] }
  }
  const database = await freshPostgresDatabase(pgUrl)
  const env = { FLOWCTL_DATABASE_URL: database.url }
  const servers = []
  let clusterRequests = 0
  try {
    for (const scope of ['instance', 'cluster']) {
      const server = await startFlowctl(writeScopeProject(scope), { env })
      servers.push(server)
      await checkOrderResponse(server.url + ROUTE)
    }
    const [instance, cluster] = await alternate(
      [
        { name: 'scope instance', url: servers[0].url + ROUTE, headers: AUTH, pid: servers[0].child.pid },
        { name: 'scope cluster', url: servers[1].url + ROUTE, headers: AUTH, pid: servers[1].child.pid },
      ],
      // Three rounds each: the difference is small beside this machine's noise.
      { log, rounds: 3 },
    )
    const cost = instance.rps / cluster.rps
    rows.push(
      row(
        'Rate limit scope cluster vs instance, PostgreSQL (req/s, mean of 3; cost = instance ÷ cluster)',
        cluster.rps.toFixed(0),
        instance.rps.toFixed(0),
        fmtRatio(cost),
        '≤ 1.20×',
        cost <= 1.2,
      ),
    )
    rows.push(
      row(
        'Rate limit scope cluster vs instance, server CPU per request',
        `${cluster.cpuUs.toFixed(0)} µs`,
        `${instance.cpuUs.toFixed(0)} µs`,
        fmtRatio(cluster.cpuUs / instance.cpuUs),
        '—',
        null,
      ),
    )
    const bad = cluster.non2xx + cluster.errors
    rows.push(row('Rate limit scope cluster: non-2xx + socket errors', String(bad), String(instance.non2xx + instance.errors), '—', '0', bad === 0))
    if (bad) notes.push(`cluster: non-2xx statuses ${JSON.stringify(cluster.statuses)}`)
    clusterRequests = cluster.runs.reduce((n, r) => n + r.total, 0)
    notes.push(`runsPerMinutePerIp ${LIMIT} (never reached); both servers on one fresh database beside ${pgUrl.replace(/\/\/[^@]*@/, '//…@')}`)
    log(`  instance ${instance.rps.toFixed(0)} req/s, cluster ${cluster.rps.toFixed(0)} req/s, cost ${fmtRatio(cost)}`)
  } finally {
    for (const server of servers) await stopChild(server.child)
    // Read once the servers are gone: a backend flushes its table statistics when it exits.
    const upserts = clusterRequests > 0 ? await rateCountWrites(database.url) : null
    if (upserts !== null) {
      rows.push(row('Rate limit scope cluster: store upserts per request', (upserts / clusterRequests).toFixed(4), '—', '—', '—', null))
      notes.push(`cluster: ${upserts} rate-count upserts (pg_stat_user_tables; warm-up and check requests included) for ${clusterRequests} measured requests`)
    }
    await database.drop().catch((error) => notes.push(`could not drop the benchmark database: ${error.message}`))
  }
  return { name: 'cluster-limit', rows, notes }
}

await runIfMain(import.meta.url, 'cluster-limit', run)
