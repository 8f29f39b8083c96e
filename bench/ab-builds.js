// On demand, not part of run-all: `node bench/ab-builds.js TREE...` compares the Run API's server CPU per
// request across builds of flowctl (each TREE a checkout with `npm run build` done, e.g. a git worktree of an
// older commit), one `serve` per tree and the raw h3 baseline on the order flow of run-api.js, loaded in alternation (ROUNDS=3).
// Rounds swing by ±15% on a 2-core machine: compare medians over several rounds, not one run, and
// run it again with the trees in the other order.
// FLOW=ping loads a Start → End flow instead (the fixed cost of a run); KEEP=all|failed|none sets
// history.keep; CONNECTIONS (default 50) autocannon's connections (20 leaves the machine less saturated);
// NO_BASELINE=1 leaves the raw h3 baseline out of the rotation; NOAUTH=1 sends no token (a flood of 401s
// on the order flow); SLUG=nope asks for a flow that does not exist (a flood of 404s).
// With AB_POSTGRES_URL=postgres://... each tree's serve gets a fresh database on that server; the
// server's CPU per request is printed too (it shares the machine).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BENCH_TOKEN, orderFlow, trivialFlow, writeProject } from './lib/project.js'
import { commandCpuMs, freePort, startChild, waitForHttp, stopAll } from './lib/proc.js'
import { alternate } from './lib/load.js'
import { freshPostgresDatabase } from './lib/flowctl-check.js'
import { startBaseline } from './lib/servers.js'
const trees = process.argv.slice(2)
const ping = process.env.FLOW === 'ping'
const keep = process.env.KEEP ?? 'all'
const flow = ping ? { slug: 'ping', flow: trivialFlow('Ping') } : { slug: 'create-order', flow: orderFlow() }
const writeAbProject = (dir) => writeProject(dir, { flows: [{ file: `${flow.slug}.yaml`, flow: flow.flow }], extra: { history: { keep } } })
const targets = []
if (!process.env.NO_BASELINE) {
  // The raw h3 baseline of run-api.js in the same rotation, for its absolute rate beside the builds.
  const baseline = await startBaseline()
  targets.push({ name: 'h3 baseline', url: baseline.url + '/order', pid: baseline.child.pid })
}
const databases = []
const postgres = process.env.AB_POSTGRES_URL
const databaseCpu = postgres ? () => commandCpuMs('postgres') : undefined
for (const tree of trees) {
  const dir = writeAbProject(mkdtempSync(join(tmpdir(), 'bisect-')))
  const port = await freePort()
  const database = postgres ? await freshPostgresDatabase(postgres) : null
  if (database) databases.push(database)
  const env = database ? { FLOWCTL_DATABASE_URL: database.url } : {}
  const child = startChild(process.execPath, [join(tree, 'bin/flowctl.js'), 'serve', dir, '--port', String(port), '--host', '127.0.0.1', '--quiet'], {
    cwd: tree,
    env,
    name: tree,
  })
  const url = `http://127.0.0.1:${port}`
  await waitForHttp(url + '/api/run/bench/nope', { child })
  targets.push({
    name: tree.split('/').pop(),
    url: url + `/api/run/bench/${process.env.SLUG ?? flow.slug}`,
    headers: process.env.NOAUTH ? {} : { authorization: `Bearer ${BENCH_TOKEN}` },
    pid: child.pid,
    sideCpuMs: databaseCpu,
  })
}
const connections = Number(process.env.CONNECTIONS ?? 50)
console.log(`${ping ? 'Start → End' : 'order flow'}, history.keep ${keep}, ${connections} connections`)
const results = await alternate(targets, { rounds: Number(process.env.ROUNDS ?? 3), connections })
for (const r of results) {
  const side = Number.isFinite(r.sideCpuUs) ? `, database CPU ${r.sideCpuUs.toFixed(0)} µs/req` : ''
  console.log(
    `${r.name.padEnd(16)} median ${r.medianRps.toFixed(0)} req/s, server CPU ${r.medianCpuUs.toFixed(1)} µs/req [${r.runs.map((x) => x.cpuUs.toFixed(0)).join(' ')}]${side} non2xx ${r.non2xx}`,
  )
}
await stopAll()
for (const database of databases) await database.drop()
process.exit(0)
