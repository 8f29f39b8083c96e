// Instructions per request of a server under valgrind's callgrind (all threads of the process), after
// a warm-up: a figure that hardly moves with other load on the machine, unlike req/s and CPU µs.
// Used by ab-instructions.js (flowctl trees against each other) and instructions.js (flowctl against
// raw h3 in the same run). Under valgrind V8 keeps optimising well past the warm-up, so several
// rounds are counted and the lowest is the figure.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { ORDER_BODIES } from './load.js'
import { freePort, startChild, stopChild, waitForHttp } from './proc.js'

function load(url, amount, headers) {
  return autocannon({
    url,
    connections: 4,
    amount,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    requests: ORDER_BODIES.map((body) => ({ method: 'POST', body })),
  })
}

/**
 * INSTRUCTION_THREADS=main counts only the thread that runs JavaScript: the optimising compiler's and
 * the garbage collector's helper threads are where most of the round-to-round spread comes from (V8
 * keeps recompiling under valgrind), so a change of a few per cent shows there first. Default: every
 * thread of the process, the honest total.
 */
const MAIN_THREAD_ONLY = process.env.INSTRUCTION_THREADS === 'main'

/** The warm-up is sent as this many loads, each on new connections. */
const WARMUP_LOADS = 4

/**
 * The instructions counted since the last zeroing: callgrind writes a dump per thread whose `totals:`
 * line has them (the main thread's file ends in `-01`).
 */
function dumpTotals(pid, outDir) {
  const before = new Set(readdirSync(outDir))
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' })
  const files = readdirSync(outDir).filter((f) => !before.has(f) && f.startsWith('callgrind.out'))
  if (!files.some((f) => f.endsWith('-01'))) throw new Error('callgrind wrote no dump of the main thread')
  let all = 0
  let main = 0
  for (const file of files) {
    const text = readFileSync(join(outDir, file), 'utf8')
    const totals = text.match(/^totals: (\d+)/m) ?? text.match(/^summary: (\d+)/m)
    all += Number(totals[1])
    if (file.endsWith('-01')) main = Number(totals[1])
  }
  return { all, main }
}

/**
 * Starts `node ...nodeArgs(port)` under callgrind, waits for `probe(port)` to answer, sends `warmup`
 * POSTs of the order bodies to `route(port)`, then counts `rounds` × `n` requests. Every answer
 * must be 2xx. Returns the instructions per request of each round (every thread, or the main thread
 * with INSTRUCTION_THREADS=main), with both counts of each round as `.all` and `.main`.
 */
export async function countInstructions({ name, nodeArgs, cwd, route, probe, headers = {}, warmup = 3000, n = 2000, rounds = 1 }) {
  const outDir = mkdtempSync(join(tmpdir(), 'callgrind-'))
  const port = await freePort()
  const child = startChild(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      '--separate-threads=yes',
      `--callgrind-out-file=${outDir}/callgrind.out.%p`,
      process.execPath,
      ...nodeArgs(port),
    ],
    { cwd, name },
  )
  try {
    await waitForHttp(probe(port), { child, timeoutMs: 600000 })
    const url = route(port)
    // Every load opens new connections, and V8 drops optimised code of Node's http internals that
    // first saw the old sockets' object shapes ("wrong map" deoptimisations, seen with
    // --trace-deopt); warmed up over several loads, the counted rounds see little recompiling.
    let warmBad = 0
    for (let i = 0; i < WARMUP_LOADS; i++) {
      const warm = await load(url, Math.ceil(warmup / WARMUP_LOADS), headers)
      warmBad += warm.non2xx
    }
    const perRequest = []
    // Both counts of every round, whichever INSTRUCTION_THREADS chose as the figure.
    perRequest.all = []
    perRequest.main = []
    for (let round = 0; round < rounds; round++) {
      execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' })
      const measured = await load(url, n, headers)
      const bad = warmBad + measured.non2xx + measured.errors + measured.timeouts
      if (bad) throw new Error(`${name}: ${bad} non-2xx answers or errors ${JSON.stringify(measured.statusCodeStats)}\n${child.outputTail()}`)
      const { all, main } = dumpTotals(child.pid, outDir)
      perRequest.all.push(all / n)
      perRequest.main.push(main / n)
      perRequest.push((MAIN_THREAD_ONLY ? main : all) / n)
    }
    return perRequest
  } finally {
    await stopChild(child, 10000)
  }
}
