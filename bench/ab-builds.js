// On demand, not part of run-all: `node bench/ab-builds.js TREE...` compares the Run API's server CPU per
// request across builds of flowctl (each TREE a checkout with `npm run build` done, e.g. a git worktree of an
// older commit), one `serve` per tree and the raw h3 baseline on the order flow of run-api.js, loaded in alternation (ROUNDS=3).
// Rounds swing by ±15% on a 2-core machine: compare medians over several rounds, not one run.
// With AB_POSTGRES_URL=postgres://... each tree's serve gets a fresh database on that server; the
// server's CPU per request is printed too (it shares the machine).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeOrderProject } from './run-api.js'
import { BENCH_TOKEN } from './lib/project.js'
import { commandCpuMs, freePort, startChild, waitForHttp, stopAll } from './lib/proc.js'
import { alternate } from './lib/load.js'
import { freshPostgresDatabase } from './lib/flowctl-check.js'
import { startBaseline } from './lib/servers.js'
const trees = process.argv.slice(2)
// The raw h3 baseline of run-api.js in the same rotation, for its absolute rate beside the builds.
const baseline = await startBaseline()
const targets = [{ name: 'h3 baseline', url: baseline.url + '/order', pid: baseline.child.pid }]
const databases = []
const postgres = process.env.AB_POSTGRES_URL
const databaseCpu = postgres ? () => commandCpuMs('postgres') : undefined
for (const tree of trees) {
  const dir = writeOrderProject(mkdtempSync(join(tmpdir(), 'bisect-')))
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
    url: url + '/api/run/bench/create-order',
    headers: { authorization: `Bearer ${BENCH_TOKEN}` },
    pid: child.pid,
    sideCpuMs: databaseCpu,
  })
}
const results = await alternate(targets, { rounds: Number(process.env.ROUNDS ?? 3) })
for (const r of results) {
  const side = Number.isFinite(r.sideCpuUs) ? `, database CPU ${r.sideCpuUs.toFixed(0)} µs/req` : ''
  console.log(
    `${r.name.padEnd(16)} ${r.rps.toFixed(0)} req/s, server CPU ${r.cpuUs.toFixed(0)} µs/req [${r.runs.map((x) => x.cpuUs.toFixed(0)).join(' ')}]${side} non2xx ${r.non2xx}`,
  )
}
await stopAll()
for (const database of databases) await database.drop()
process.exit(0)
