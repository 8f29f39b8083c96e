// On demand, not part of run-all: `node bench/ab-builds.js TREE...` compares the Run API's server CPU per
// request across builds of flowctl (each TREE a checkout with `npm run build` done, e.g. a git worktree of an
// older commit), one `serve` per tree on the order flow of run-api.js, loaded in alternation (ROUNDS=3).
// Rounds swing by ±15% on a 2-core machine: compare medians over several rounds, not one run.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeOrderProject } from './run-api.js'
import { BENCH_TOKEN } from './lib/project.js'
import { freePort, startChild, waitForHttp, stopAll } from './lib/proc.js'
import { alternate } from './lib/load.js'
const trees = process.argv.slice(2)
const targets = []
for (const tree of trees) {
  const dir = writeOrderProject(mkdtempSync(join(tmpdir(), 'bisect-')))
  const port = await freePort()
  const child = startChild(process.execPath, [join(tree, 'bin/flowctl.js'), 'serve', dir, '--port', String(port), '--host', '127.0.0.1', '--quiet'], { cwd: tree, env: {}, name: tree })
  const url = `http://127.0.0.1:${port}`
  await waitForHttp(url + '/api/run/bench/nope', { child })
  targets.push({ name: tree.split('/').pop(), url: url + '/api/run/bench/create-order', headers: { authorization: `Bearer ${BENCH_TOKEN}` }, pid: child.pid })
}
const results = await alternate(targets, { rounds: Number(process.env.ROUNDS ?? 3) })
for (const r of results) console.log(`${r.name.padEnd(16)} ${r.rps.toFixed(0)} req/s, server CPU ${r.cpuUs.toFixed(0)} µs/req [${r.runs.map((x) => x.cpuUs.toFixed(0)).join(' ')}] non2xx ${r.non2xx}`)
await stopAll()
process.exit(0)
