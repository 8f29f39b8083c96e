// SPEC §23: what exporting spans costs the Run API. The order flow under autocannon with export off,
// with export on (OTLP/HTTP protobuf to a receiver in this process that answers 200 at once), and
// with a collector that accepts connections and never answers; alternated off, on, silent, ….
import { createServer } from 'node:http'
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { BENCH_TOKEN } from './lib/project.js'
import { startFlowctl } from './lib/servers.js'
import { stopChild } from './lib/proc.js'
import { alternate } from './lib/load.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'
import { checkOrderResponse, writeOrderProject } from './run-api.js'

const ROUTE = '/api/run/bench/create-order'
const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` }

function listen(handler) {
  const server = createServer(handler)
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

export async function run({ log = console.log } = {}) {
  const rows = []
  const notes = []
  log('[telemetry] Run API with span export off, on, and to a collector that never answers')
  requireFlowctl()
  let spans = 0
  const receiver = await listen((req, res) => {
    req.resume()
    req.on('end', () => {
      spans++
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  const silent = await listen(() => {})
  const dir = writeOrderProject(join(TMP, 'telemetry-project'))
  const endpoint = (server) => `http://127.0.0.1:${server.address().port}`
  const servers = []
  try {
    const off = await startFlowctl(dir)
    servers.push(off)
    const on = await startFlowctl(dir, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint(receiver) } })
    servers.push(on)
    const hung = await startFlowctl(dir, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint(silent) } })
    servers.push(hung)
    for (const server of servers) await checkOrderResponse(server.url + ROUTE)
    const [offRun, onRun, hungRun] = await alternate(
      [
        { name: 'export off', url: off.url + ROUTE, headers: AUTH, pid: off.child.pid },
        { name: 'export on', url: on.url + ROUTE, headers: AUTH, pid: on.child.pid },
        { name: 'collector never answers', url: hung.url + ROUTE, headers: AUTH, pid: hung.child.pid },
      ],
      { log },
    )
    for (const [label, measured] of [
      ['export on', onRun],
      ['collector never answers', hungRun],
    ]) {
      rows.push(
        row(
          `Run API with spans, ${label} (req/s; baseline export off)`,
          `${measured.rps.toFixed(0)} req/s`,
          `${offRun.rps.toFixed(0)} req/s`,
          fmtRatio(measured.rps / offRun.rps),
          // SPEC §23 sets no figure; the CPU per request (next row) is the steadier measure.
          '—',
          null,
        ),
      )
      rows.push(
        row(
          `Run API p50 / p99 and CPU per request, ${label}`,
          `${measured.p50.toFixed(1)} / ${measured.p99.toFixed(1)} ms, ${measured.cpuUs.toFixed(0)} µs`,
          `${offRun.p50.toFixed(1)} / ${offRun.p99.toFixed(1)} ms, ${offRun.cpuUs.toFixed(0)} µs`,
          fmtRatio(measured.p99 / offRun.p99) + ' (p99)',
          '—',
          null,
        ),
      )
      if (measured.non2xx || measured.errors) notes.push(`${label}: ${measured.non2xx} non-2xx answers, ${measured.errors} errors`)
    }
    notes.push(`the receiver took ${spans} export requests`)
  } finally {
    for (const server of servers) await stopChild(server.child)
    receiver.closeAllConnections()
    silent.closeAllConnections()
    receiver.close()
    silent.close()
  }
  return { name: 'telemetry', rows, notes }
}

await runIfMain(import.meta.url, 'telemetry', run)
