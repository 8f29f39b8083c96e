// On demand, not part of run-all: `node bench/ab-instructions.js TREE...` counts the instructions
// (valgrind --tool=callgrind, all threads of the process) that `flowctl serve` of each built TREE spends
// per Run API request of the order flow (run-api.js), after a warm-up. Instruction counts hardly move
// with other load on the machine, unlike req/s and even CPU µs, so small changes show: a change of 2%
// is visible where autocannon rounds swing by ±15%. WARMUP (default 6000, as four loads on new connections) requests, then N (2000) counted,
// 4 connections; ROUNDS (1) repeats the count on the same server. Under valgrind V8 keeps optimising well
// past the warm-up (a first counted round of 1,129k fell to 635k in the next), so use ROUNDS=3 and
// compare the later rounds (the ratio printed takes each tree's lowest). Slow: minutes per tree.
// INSTRUCTION_THREADS=main decides the ratio by the JavaScript thread's count (see bench/lib/instructions.js).
// FLOW=expression adds a `{{= }}` expression the fast evaluator answers to the order flow's insert.
// FLOW=lookup counts another flow instead, for mechanisms the order flow never reaches: the project
// has CORS settings and every request an allowed Origin, and a find node with a filter and a sort
// (on a collection nothing writes to, so its cost stays the same) runs before the insert.
// KEEP=none,all counts each tree once per `history.keep` setting (SPEC §14; as history-keep.js writes
// its projects) and prints, per tree, each setting's count against the first's.
import { appendFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeOrderProject } from './run-api.js'
import { BENCH_TOKEN, orderFlow, writeProject } from './lib/project.js'
import { countInstructions } from './lib/instructions.js'
import { stopAll } from './lib/proc.js'

const WARMUP = Number(process.env.WARMUP ?? 6000)
const N = Number(process.env.N ?? 2000)
const ROUNDS = Number(process.env.ROUNDS ?? 1)
const FLOW = process.env.FLOW ?? 'order'
const ORIGIN = 'https://shop.example'

/** The order flow with CORS (project settings) and a filtered, sorted find before its insert. */
function writeLookupProject(dir) {
  const flow = orderFlow()
  const [start, check, save, done] = flow.nodes
  check.next = { true: 'lookup', false: 'lookup' }
  const lookup = {
    id: 'lookup',
    type: 'find',
    name: 'Catalog',
    collection: 'catalog',
    filter: { sku: { $eq: '{{start.sku}}' }, qty: { $lte: 100 } },
    sort: { sku: 1 },
    limit: 1,
    next: 'save',
  }
  flow.nodes = [start, check, lookup, save, done]
  return writeProject(dir, { flows: [{ file: 'create-order.yaml', flow }], extra: { cors: { origins: [ORIGIN] } } })
}

/** The order flow whose insert also stores a `{{= }}` expression the fast evaluator answers. */
function writeExpressionProject(dir) {
  const flow = orderFlow()
  flow.nodes[2].document.total = '{{= start.qty * 3 + 1 }}'
  return writeProject(dir, { flows: [{ file: 'create-order.yaml', flow }] })
}

const PROJECTS = { order: writeOrderProject, lookup: writeLookupProject, expression: writeExpressionProject }
if (!PROJECTS[FLOW]) throw new Error(`FLOW must be one of ${Object.keys(PROJECTS).join(', ')}`)
// Unset: the project's default (keep: all), one count per tree.
const KEEPS = process.env.KEEP ? process.env.KEEP.split(',') : [undefined]

/** FLOW's project, with `history.keep` set when `keep` is given (flowctl.yaml has no history key). */
function writeCountedProject(dir, keep) {
  PROJECTS[FLOW](dir)
  if (keep !== undefined) appendFileSync(join(dir, 'flowctl.yaml'), `history:\n  keep: ${keep}\n`)
  return dir
}

/** Instructions per request of each counted round, on one `serve` of `tree`. */
async function count(tree, keep) {
  const dir = writeCountedProject(mkdtempSync(join(tmpdir(), 'instr-')), keep)
  const perRequest = await countInstructions({
    name: tree,
    cwd: tree,
    nodeArgs: (port) => [join(tree, 'bin/flowctl.js'), 'serve', dir, '--port', String(port), '--host', '127.0.0.1', '--quiet'],
    probe: (port) => `http://127.0.0.1:${port}/api/run/bench/nope`,
    route: (port) => `http://127.0.0.1:${port}/api/run/bench/create-order`,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, ...(FLOW === 'lookup' ? { origin: ORIGIN } : {}) },
    warmup: WARMUP,
    n: N,
    rounds: ROUNDS,
  })
  console.log(
    `${tree.padEnd(28)}${keep === undefined ? '' : ` keep: ${keep}`} ${perRequest.map((x) => (x / 1000).toFixed(0) + 'k').join(' ')} instructions/request (every thread ${perRequest.all.map((x) => (x / 1000).toFixed(0) + 'k').join(' ')}; JavaScript thread ${perRequest.main.map((x) => (x / 1000).toFixed(0) + 'k').join(' ')})`,
  )
  return perRequest
}

const results = []
for (const tree of process.argv.slice(2)) {
  const counts = []
  for (const keep of KEEPS) counts.push(await count(tree, keep))
  results.push({ tree, perRequest: counts[0] })
  for (let i = 1; i < KEEPS.length; i++) {
    const ratio = Math.min(...counts[i]) / Math.min(...counts[0])
    console.log(`${tree}: keep: ${KEEPS[i]} ${ratio.toFixed(3)}× keep: ${KEEPS[0]}`)
  }
}
const base = results[0]
for (const r of results.slice(1)) {
  const ratio = Math.min(...r.perRequest) / Math.min(...base.perRequest)
  console.log(`${r.tree}: ${ratio.toFixed(3)}× ${base.tree}`)
}
await stopAll()
process.exit(0)
