// Instructions per request (valgrind callgrind, every thread of the process) of the Run API's order
// flow (history kept, the default) against raw h3's POST /order, in the same run: the figure a
// mechanism is decided by, since it hardly moves with other load. WARMUP (default 6000, sent as four loads on new connections) requests, then
// ROUNDS (default 3) × N (default 2000) counted; each server's lowest round is its figure. Slow:
// minutes per server. `node bench/instructions.js` alone, or as part of bench/report.js.
import { join } from 'node:path'
import { BENCH_DIR, FLOWCTL, ROOT, TMP } from './lib/paths.js'
import { BENCH_TOKEN } from './lib/project.js'
import { countInstructions } from './lib/instructions.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'
import { writeOrderProject } from './run-api.js'

const WARMUP = Number(process.env.WARMUP ?? 6000)
const N = Number(process.env.N ?? 2000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const TARGET = 2.5
const fmtK = (x) => `${(x / 1000).toFixed(0)}k`

export async function run({ log = console.log } = {}) {
  log(`[instructions] instructions per request, flowctl's order flow against raw h3 (callgrind, ${ROUNDS} × ${N} after ${WARMUP})`)
  const rows = []
  const notes = []
  try {
    requireFlowctl()
    const counted = { warmup: WARMUP, n: N, rounds: ROUNDS }
    const h3 = await countInstructions({
      name: 'raw h3',
      cwd: ROOT,
      nodeArgs: (port) => [join(BENCH_DIR, 'lib', 'h3-baseline.js'), String(port)],
      probe: (port) => `http://127.0.0.1:${port}/order`,
      route: (port) => `http://127.0.0.1:${port}/order`,
      ...counted,
    })
    log(`  raw h3: ${h3.all.map(fmtK).join(' ')} instructions/request (JavaScript thread ${h3.main.map(fmtK).join(' ')})`)
    const dir = writeOrderProject(join(TMP, 'instructions'))
    const flowctl = await countInstructions({
      name: 'flowctl serve',
      cwd: ROOT,
      nodeArgs: (port) => [FLOWCTL, 'serve', dir, '--port', String(port), '--host', '127.0.0.1', '--quiet'],
      probe: (port) => `http://127.0.0.1:${port}/api/run/bench/nope`,
      route: (port) => `http://127.0.0.1:${port}/api/run/bench/create-order`,
      headers: { authorization: `Bearer ${BENCH_TOKEN}` },
      ...counted,
    })
    log(`  flowctl: ${flowctl.all.map(fmtK).join(' ')} instructions/request (JavaScript thread ${flowctl.main.map(fmtK).join(' ')})`)
    const f = Math.min(...flowctl.all)
    const b = Math.min(...h3.all)
    rows.push(
      row(
        'Run API instructions per request, order flow with history kept (baseline: raw h3 POST /order; callgrind, lowest round)',
        fmtK(f),
        fmtK(b),
        fmtRatio(f / b),
        `≤ ${TARGET}×`,
        f / b <= TARGET,
      ),
    )
    const fm = Math.min(...flowctl.main)
    const bm = Math.min(...h3.main)
    rows.push(
      row(
        'Run API instructions per request on the JavaScript thread only (the compiler and GC helper threads left out: the steadier figure for comparing builds)',
        fmtK(fm),
        fmtK(bm),
        fmtRatio(fm / bm),
        '—',
        null,
      ),
    )
    notes.push(`instructions per request by round, every thread: flowctl ${flowctl.all.map(fmtK).join(' / ')}; raw h3 ${h3.all.map(fmtK).join(' / ')}`)
    notes.push(`JavaScript thread only, by round: flowctl ${flowctl.main.map(fmtK).join(' / ')}; raw h3 ${h3.main.map(fmtK).join(' / ')}`)
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row('Run API instructions per request', 'failed', '—', '—', `≤ ${TARGET}×`, false))
  }
  return { name: 'instructions', rows, notes }
}

await runIfMain(import.meta.url, 'instructions', run)
