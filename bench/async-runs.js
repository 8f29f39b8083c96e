// 9. What the async acknowledgement costs (SPEC §12, `respond: async`): the 202 of an async Start
// (validate, commit the run to the store's queue, answer) against a synchronous run of the same
// empty flow (Start → End), both routes of one `serve` and loaded alternately in one run
// (sync, async, sync, async, ...). The ack-only instance has `limits.asyncConcurrency: 0` (it queues
// and runs nothing: a web-only instance), so the figure is the acknowledgement alone. Target: the
// 202 costs at most 1.2× the synchronous run (req/s ≥ 0.83× of it). Then, for information, the
// same with the default 4 workers running the queued runs in the same process.
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { writeProject } from './lib/project.js'
import { startFlowctl } from './lib/servers.js'
import { httpRequest, stopChild } from './lib/proc.js'
import { alternate } from './lib/load.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { freshPostgresDatabase, reachablePostgres, requireFlowctl } from './lib/flowctl-check.js'

const SYNC_ROUTE = '/api/run/bench/empty'
const ASYNC_ROUTE = '/api/run/bench/empty-async'

function emptyFlow(name, respond) {
  return {
    name,
    nodes: [
      { id: 'start', type: 'start', name: 'Start', method: 'post', ...(respond ? { respond } : {}), next: 'done' },
      { id: 'done', type: 'end', name: 'Done', status: 200, body: { ok: true } },
    ],
  }
}

function writeAsyncProject(asyncConcurrency) {
  return writeProject(join(TMP, `async-runs-${asyncConcurrency}`), {
    limits: { asyncConcurrency },
    flows: [
      { file: 'empty.yaml', flow: emptyFlow('Empty') },
      { file: 'empty-async.yaml', flow: emptyFlow('Empty Async', 'async') },
    ],
  })
}

async function expectStatus(url, status) {
  const res = await httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  if (res.status !== status) throw new Error(`expected ${status} from ${url}, got ${res.status} ${res.body.slice(0, 200)}`)
  return JSON.parse(res.body)
}

async function measure(asyncConcurrency, rounds, log, env = {}) {
  const server = await startFlowctl(writeAsyncProject(asyncConcurrency), { env })
  try {
    await expectStatus(server.url + SYNC_ROUTE, 200)
    const queued = await expectStatus(server.url + ASYNC_ROUTE, 202)
    if (queued.status !== 'queued' || typeof queued.runId !== 'string') throw new Error(`unexpected 202 body ${JSON.stringify(queued)}`)
    const targets = [
      { name: 'sync Start → End', url: server.url + SYNC_ROUTE, pid: server.child.pid },
      { name: `async 202 (workers ${asyncConcurrency})`, url: server.url + ASYNC_ROUTE, pid: server.child.pid },
    ]
    const [sync, ack] = await alternate(targets, { log, rounds })
    return { sync, ack }
  } finally {
    await stopChild(server.child)
  }
}

export async function run({ log = console.log } = {}) {
  const rows = []
  const notes = []
  log('[async-runs] the 202 of an async Start against a synchronous run of an empty flow')
  requireFlowctl()

  const { sync, ack } = await measure(0, 3, log)
  const cost = sync.rps / ack.rps
  rows.push(
    row(
      'Async acknowledgement (202) vs sync empty run: cost (inverse req/s, mean of 3)',
      `${ack.rps.toFixed(0)} req/s`,
      `${sync.rps.toFixed(0)} req/s`,
      fmtRatio(cost),
      '≤ 1.20×',
      cost <= 1.2,
    ),
  )
  rows.push(
    row(
      'Async acknowledgement server CPU per request',
      `${ack.cpuUs.toFixed(0)} µs`,
      `${sync.cpuUs.toFixed(0)} µs`,
      fmtRatio(ack.cpuUs / sync.cpuUs),
      '—',
      null,
    ),
  )
  rows.push(row('Async acknowledgement latency p99', `${ack.p99.toFixed(1)} ms`, `${sync.p99.toFixed(1)} ms`, fmtRatio(ack.p99 / sync.p99), '—', null))
  const bad = ack.non2xx + ack.errors + sync.non2xx + sync.errors
  rows.push(row('non-2xx + socket errors (both routes)', String(bad), '—', '—', '0', bad === 0))
  notes.push(
    `baseline (sync Start → End, embedded store): ${sync.rps.toFixed(0)} req/s absolute; the ack-only instance (asyncConcurrency: 0) queues every run and executes none`,
  )

  // For information: the same instance also executing the queued runs (4 workers).
  const withWorkers = await measure(4, 1, log)
  const costWithWorkers = withWorkers.sync.rps / withWorkers.ack.rps
  rows.push(
    row(
      'Async 202 vs sync empty run, 4 workers running the queue in the same process',
      `${withWorkers.ack.rps.toFixed(0)} req/s`,
      `${withWorkers.sync.rps.toFixed(0)} req/s`,
      fmtRatio(costWithWorkers),
      '—',
      null,
    ),
  )
  notes.push(
    'with workers, the instance runs each queued run as well as acknowledging it, and the backlog left by the async round keeps running during the next sync round: both figures are lower, and the ratio mixes the two costs',
  )
  // The same acknowledgement on PostgreSQL (where several instances share the queue), when a server answers.
  const pgUrl = await reachablePostgres()
  if (pgUrl) {
    const database = await freshPostgresDatabase(pgUrl)
    try {
      const pg = await measure(0, 2, log, { FLOWCTL_DATABASE_URL: database.url })
      const pgCost = pg.sync.rps / pg.ack.rps
      rows.push(
        row(
          'Async acknowledgement (202) vs sync empty run, PostgreSQL: cost (inverse req/s, mean of 2)',
          `${pg.ack.rps.toFixed(0)} req/s`,
          `${pg.sync.rps.toFixed(0)} req/s`,
          fmtRatio(pgCost),
          '≤ 1.20×',
          pgCost <= 1.2,
        ),
      )
      notes.push(
        `baseline on PostgreSQL (sync Start → End): ${pg.sync.rps.toFixed(0)} req/s absolute, in a fresh database beside ${pgUrl.replace(/\/\/[^@]*@/, '//…@')}`,
      )
    } finally {
      await database.drop().catch((error) => notes.push(`could not drop the benchmark database: ${error.message}`))
    }
  } else {
    notes.push('PostgreSQL skipped: no server answered at FLOWCTL_BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test')
  }
  return { name: 'async-runs', rows, notes }
}

await runIfMain(import.meta.url, 'async-runs', run)
