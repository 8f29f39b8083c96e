// On demand, not part of run-all: the engine and store alone, without HTTP, for A/B of the store's
// commits per run. `node bench/run-commits.js TREE...` runs the order flow of run-api.js through
// each TREE's built engine (`dist/`) on its store as `serve` opens it (SQLite on the store's connection;
// PostgreSQL with STORE=postgres and AB_POSTGRES_URL, a fresh database per tree), RUNS runs with
// CONCURRENCY in flight, one child process per tree and round, trees alternating for ROUNDS rounds.
// Prints per tree the process's CPU µs per run (every thread, process.cpuUsage) and runs/s.
// KEEP=none (or all, errors) sets the project's `history.keep` (SPEC §14; default: all).
// Instruction counts: run one child under `valgrind --tool=callgrind` with two values of RUNS
// (WARMUP=0) and divide the difference of the totals by the difference of the runs.
import { fork } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { freshPostgresDatabase } from './lib/flowctl-check.js'
import { median } from './lib/load.js'
import { BENCH_TOKEN, orderFlow, writeProject } from './lib/project.js'

const RUNS = Number(process.env.RUNS ?? 5000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50)

/** run-api.js's order project, with `history.keep: KEEP` when set. */
function writeOrderProject(dir) {
  const extra = process.env.KEEP ? { history: { keep: process.env.KEEP } } : {}
  return writeProject(dir, { flows: [{ file: 'create-order.yaml', flow: orderFlow() }], extra })
}

if (process.argv[2] === '--child') {
  const [tree, dir, databaseUrl] = process.argv.slice(3)
  const load = (path) => import(pathToFileURL(join(tree, 'dist', path)).href)
  // A driver is a folder since the store was split into ports; older trees have one file.
  const loadStore = (name) => load(`store/${name}/index.js`).catch(() => load(`store/${name}.js`))
  const [{ loadProject }, { runFlow }, stores] = await Promise.all([
    load('project/load.js'),
    load('flow/engine.js'),
    loadStore(databaseUrl ? 'postgres' : 'sqlite'),
  ])
  const project = await loadProject(dir, { env: { BENCH_TOKEN } })
  const store = databaseUrl ? await stores.openPostgresStore(databaseUrl) : await stores.openSqliteStore(join(dir, '.flowctl', 'flowctl.db'))
  const flow = project.flows.get('create-order')
  const once = (i) => runFlow({ project, flow, store, trigger: 'http', method: 'POST', input: { body: { sku: `A-${i}`, qty: 1 + (i % 20) } } })
  const batch = async (count) => {
    let next = 0
    const worker = async () => {
      while (next < count) {
        const outcome = await once(next++)
        if (outcome.kind !== 'response' || outcome.status !== 201) throw new Error(`run answered ${JSON.stringify(outcome).slice(0, 200)}`)
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  }
  await batch(Number(process.env.WARMUP ?? Math.min(1000, RUNS)))
  const cpu = process.cpuUsage()
  const began = performance.now()
  await batch(RUNS)
  const ms = performance.now() - began
  const used = process.cpuUsage(cpu)
  await store.close()
  const result = { cpuUs: (used.user + used.system) / RUNS, runsPerS: (RUNS * 1000) / ms }
  // Forked by the A/B below, or run alone (under valgrind: `node bench/run-commits.js --child TREE DIR`).
  if (process.send) process.send(result)
  else console.log(JSON.stringify(result))
  process.exit(0)
}

const trees = process.argv.slice(2).map((tree) => resolve(tree))
const rounds = Number(process.env.ROUNDS ?? 5)
const postgres = process.env.STORE === 'postgres' ? process.env.AB_POSTGRES_URL : undefined
if (process.env.STORE === 'postgres' && !postgres) throw new Error('STORE=postgres needs AB_POSTGRES_URL')
const results = trees.map(() => [])
for (let round = 0; round < rounds; round++) {
  for (const [i, tree] of trees.entries()) {
    const dir = writeOrderProject(mkdtempSync(join(tmpdir(), 'run-commits-')))
    const database = postgres ? await freshPostgresDatabase(postgres) : null
    try {
      const child = fork(new URL(import.meta.url).pathname, ['--child', tree, dir, ...(database ? [database.url] : [])], { stdio: 'inherit' })
      const result = await new Promise((resolveResult, reject) => {
        child.on('message', resolveResult)
        child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`${tree}: child exited with ${code}`))))
      })
      results[i].push(result)
      console.log(`  ${tree.split('/').pop().padEnd(14)} round ${round + 1}: ${result.cpuUs.toFixed(0)} µs CPU/run, ${result.runsPerS.toFixed(0)} runs/s`)
    } finally {
      await database?.drop()
    }
  }
}
for (const [i, tree] of trees.entries()) {
  const cpu = results[i].map((r) => r.cpuUs)
  const rate = results[i].map((r) => r.runsPerS)
  console.log(
    `${tree.split('/').pop().padEnd(14)} median ${median(cpu).toFixed(0)} µs CPU/run [${cpu.map((x) => x.toFixed(0)).join(' ')}], median ${median(rate).toFixed(0)} runs/s [${rate.map((x) => x.toFixed(0)).join(' ')}]`,
  )
}
