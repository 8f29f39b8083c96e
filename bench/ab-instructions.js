// On demand, not part of run-all: `node bench/ab-instructions.js TREE...` counts the instructions
// (valgrind --tool=callgrind, all threads of the process) that `flowctl serve` of each built TREE spends
// per Run API request of the order flow (run-api.js), after a warm-up. Instruction counts hardly move
// with other load on the machine, unlike req/s and even CPU µs, so small changes show: a change of 2%
// is visible where autocannon rounds swing by ±15%. WARMUP (default 3000) requests, then N (2000) counted,
// 4 connections; ROUNDS (1) repeats the count on the same server. Under valgrind V8 keeps optimising well
// past the warm-up (a first counted round of 1,129k fell to 635k in the next), so use ROUNDS=3 and
// compare the later rounds (the ratio printed takes each tree's lowest). Slow: minutes per tree.
// Threads are counted apart (--separate-threads=yes): the whole process and its main thread alone.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { writeOrderProject } from './run-api.js'
import { BENCH_TOKEN } from './lib/project.js'
import { ORDER_BODIES } from './lib/load.js'
import { freePort, startChild, stopAll, stopChild, waitForHttp } from './lib/proc.js'

const WARMUP = Number(process.env.WARMUP ?? 3000)
const N = Number(process.env.N ?? 2000)
const ROUNDS = Number(process.env.ROUNDS ?? 1)

function load(url, amount) {
  return autocannon({
    url,
    connections: 4,
    amount,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_TOKEN}` },
    requests: ORDER_BODIES.map((body) => ({ method: 'POST', body })),
  })
}

/**
 * The instructions counted since the last zeroing: callgrind writes a dump whose `totals:` line has
 * them, one file per thread with `--separate-threads=yes` (named `…-01` for the main thread).
 * Returns the whole process's count and the main thread's.
 */
function dumpTotals(pid, outDir) {
  const before = new Set(readdirSync(outDir))
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' })
  const files = readdirSync(outDir).filter((f) => !before.has(f) && f.startsWith('callgrind.out'))
  if (files.length === 0) throw new Error('callgrind wrote no dump')
  let all = 0
  let main = 0
  for (const file of files) {
    const text = readFileSync(join(outDir, file), 'utf8')
    const count = Number((text.match(/^totals: (\d+)/m) ?? text.match(/^summary: (\d+)/m))[1])
    all += count
    if (file.endsWith('-01')) main += count
  }
  return { all, main }
}

const results = []
for (const tree of process.argv.slice(2)) {
  const dir = writeOrderProject(mkdtempSync(join(tmpdir(), 'instr-')))
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
      join(tree, 'bin/flowctl.js'),
      'serve',
      dir,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--quiet',
    ],
    { cwd: tree, name: tree },
  )
  const url = `http://127.0.0.1:${port}/api/run/bench/create-order`
  await waitForHttp(url.replace('create-order', 'nope'), { child, timeoutMs: 600000 })
  const warm = await load(url, WARMUP)
  const perRequest = []
  const mainPerRequest = []
  for (let round = 0; round < ROUNDS; round++) {
    execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' })
    const measured = await load(url, N)
    const bad = warm.non2xx + measured.non2xx + measured.errors + measured.timeouts
    if (bad) throw new Error(`${tree}: ${bad} non-2xx answers or errors ${JSON.stringify(measured.statusCodeStats)}\n${child.outputTail()}`)
    const { all, main } = dumpTotals(child.pid, outDir)
    perRequest.push(all / N)
    mainPerRequest.push(main / N)
  }
  const k = (list) => list.map((x) => (x / 1000).toFixed(0) + 'k').join(' ')
  console.log(`${tree.padEnd(28)} ${k(perRequest)} instructions/request (main thread ${k(mainPerRequest)})`)
  results.push({ tree, perRequest, mainPerRequest })
  await stopChild(child, 10000)
}
const base = results[0]
for (const r of results.slice(1)) {
  const ratio = (key) => (Math.min(...r[key]) / Math.min(...base[key])).toFixed(3)
  console.log(`${r.tree}: ${ratio('perRequest')}× ${base.tree} (main thread ${ratio('mainPerRequest')}×)`)
}
await stopAll()
process.exit(0)
