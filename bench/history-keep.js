// 8. What stored inputs and traces cost the Run API (SPEC §14): the order flow with
// `history.keep: all` (the default: every run keeps its input and trace) against the same flow with
// `history.keep: none` (records only), both served at once and loaded alternately in one run
// (none, all, none, all). Target: keep all within 0.9× of keep none.
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { orderFlow, writeProject } from './lib/project.js'
import { startFlowctl } from './lib/servers.js'
import { stopChild } from './lib/proc.js'
import { alternate } from './lib/load.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { newestRun, requireFlowctl } from './lib/flowctl-check.js'
import { BENCH_TOKEN } from './lib/project.js'
import { checkOrderResponse } from './run-api.js'

const ROUTE = '/api/run/bench/create-order'
const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` }

function writeKeepProject(keep) {
  return writeProject(join(TMP, `history-keep-${keep}`), { flows: [{ file: 'create-order.yaml', flow: orderFlow() }], extra: { history: { keep } } })
}

export async function run({ log = console.log } = {}) {
  const rows = []
  const notes = []
  log('[history-keep] Run API with history.keep: all against history.keep: none')
  requireFlowctl()
  const none = await startFlowctl(writeKeepProject('none'))
  const all = await startFlowctl(writeKeepProject('all'))
  try {
    await checkOrderResponse(none.url + ROUTE)
    await checkOrderResponse(all.url + ROUTE)
    const [base, kept] = await alternate(
      [
        { name: 'keep: none', url: none.url + ROUTE, headers: AUTH, pid: none.child.pid },
        { name: 'keep: all', url: all.url + ROUTE, headers: AUTH, pid: all.child.pid },
      ],
      // Three rounds each: this machine's load swings between rounds; the means compare better.
      { log, rounds: 3 },
    )
    const ratio = kept.rps / base.rps
    rows.push(row('Run API, history.keep: all vs none (req/s, mean of 3)', kept.rps.toFixed(0), base.rps.toFixed(0), fmtRatio(ratio), '≥ 0.90×', ratio >= 0.9))
    rows.push(
      row(
        'Run API server CPU per request, keep: all vs none',
        `${kept.cpuUs.toFixed(0)} µs`,
        `${base.cpuUs.toFixed(0)} µs`,
        fmtRatio(kept.cpuUs / base.cpuUs),
        '—',
        null,
      ),
    )
    rows.push(row('Run API latency p99, keep: all vs none', `${kept.p99.toFixed(1)} ms`, `${base.p99.toFixed(1)} ms`, fmtRatio(kept.p99 / base.p99), '—', null))
    const bad = kept.non2xx + kept.errors + base.non2xx + base.errors
    rows.push(row('non-2xx + socket errors (both servers)', String(bad), '—', '—', '0', bad === 0))
    notes.push(`baseline (keep: none): ${base.rps.toFixed(0)} req/s absolute`)
  } finally {
    await stopChild(none.child)
    await stopChild(all.child)
  }
  // The kept run really holds its details: read back after the server stopped.
  const newest = newestRun(join(TMP, 'history-keep-all'), {})
  notes.push(`newest kept record: ${newest ? `${newest.flow} ${newest.status}` : 'none'}`)
  return { name: 'history-keep', rows, notes }
}

await runIfMain(import.meta.url, 'history-keep', run)
