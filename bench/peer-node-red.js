// 2. The peer: Node-RED 4.1.15 serving the same order flow (http in → switch → change → http
// response), alternating with flowctl under the same autocannon load.
import { startFlowctl } from './lib/servers.js'
import { stopChild } from './lib/proc.js'
import { alternate } from './lib/load.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { newestRun, requireFlowctl } from './lib/flowctl-check.js'
import { installNodeRed, NODE_RED_VERSION, startNodeRed } from './lib/node-red.js'
import { checkOrderResponse, writeOrderProject } from './run-api.js'
import { BENCH_TOKEN } from './lib/project.js'

export async function run({ log = console.log } = {}) {
  const rows = []
  const notes = []
  log(`[peer-node-red] flowctl vs Node-RED ${NODE_RED_VERSION}`)
  installNodeRed(log)
  const nodeRed = await startNodeRed()
  let flowctl
  let projectDir
  let flowStats
  try {
    requireFlowctl()
    projectDir = writeOrderProject()
    flowctl = await startFlowctl(projectDir)
    const route = flowctl.url + '/api/run/bench/create-order'
    await checkOrderResponse(route)
    const [red, flow] = await alternate(
      [
        { name: `Node-RED ${NODE_RED_VERSION}`, url: nodeRed.url + '/order', pid: nodeRed.child.pid },
        { name: 'flowctl (SQLite)', url: route, headers: { authorization: `Bearer ${BENCH_TOKEN}` }, pid: flowctl.child.pid },
      ],
      { log },
    )
    flowStats = flow
    const ratio = flow.rps / red.rps
    // Issue 21's target: flowctl at 5× Node-RED's req/s or more.
    rows.push(
      row(
        `Order flow vs Node-RED ${NODE_RED_VERSION} (req/s; baseline = Node-RED)`,
        `${flow.rps.toFixed(0)} req/s`,
        `${red.rps.toFixed(0)} req/s`,
        fmtRatio(ratio),
        '≥ 5×',
        ratio >= 5,
      ),
    )
    rows.push(
      row(
        'Order flow vs Node-RED, p50 / p99',
        `${flow.p50.toFixed(1)} / ${flow.p99.toFixed(1)} ms`,
        `${red.p50.toFixed(1)} / ${red.p99.toFixed(1)} ms`,
        fmtRatio(flow.p99 / red.p99) + ' (p99)',
        '—',
        null,
      ),
    )
    rows.push(
      row(
        'Order flow vs Node-RED, server CPU per request',
        `${flow.cpuUs.toFixed(0)} µs`,
        `${red.cpuUs.toFixed(0)} µs`,
        fmtRatio(flow.cpuUs / red.cpuUs),
        '—',
        null,
      ),
    )
    notes.push(
      `Node-RED non-2xx ${red.non2xx}, flowctl non-2xx ${flow.non2xx}; flowctl validates, authenticates and records every run in SQLite, the Node-RED flow does neither`,
    )
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row(`Order flow vs Node-RED ${NODE_RED_VERSION}`, 'failed', '—', '—', '≥ 5×', false))
  } finally {
    await stopChild(flowctl?.child)
    await stopChild(nodeRed.child)
  }
  if (flowctl) {
    // Read after the server stopped: every answered run must already be committed.
    const newest = newestRun(projectDir)
    const ok = newest !== null && newest.flow === 'create-order' && newest.status === 'success'
    rows.push(
      row(
        'Order flow vs Node-RED: history recorded under load',
        newest ? `${newest.flow} ${newest.status} ${newest.httpStatus}` : 'no record',
        '—',
        '—',
        'newest record present',
        ok,
      ),
    )
    const bad = (flowStats?.non2xx ?? 0) + (flowStats?.errors ?? 0)
    if (flowStats) rows.push(row('Order flow vs Node-RED: flowctl non-2xx + socket errors', String(bad), '—', '—', '0', bad === 0))
  }
  return { name: 'peer-node-red', rows, notes }
}

await runIfMain(import.meta.url, 'peer-node-red', run)
