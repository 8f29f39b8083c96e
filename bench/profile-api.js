// On demand, not part of run-all: `node bench/profile-api.js [project-dir]` runs `flowctl serve`
// under `node --cpu-prof` with the Run API load of run-api.js and prints the functions with the most
// self time (overall and in flowctl's own dist/ code, which maps 1:1 to src/). CONNECTIONS (default 50)
// sets autocannon's connections: with fewer the machine is not saturated, so fewer samples land on
// a thread that waits for a core (a sampled stack is charged whether it runs or not).
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, TMP } from './lib/paths.js'
import { BENCH_TOKEN } from './lib/project.js'
import { startFlowctl } from './lib/servers.js'
import { stopAll, stopChild } from './lib/proc.js'
import { loadOrders } from './lib/load.js'
import { topSelfTime } from './lib/cpuprofile.js'
import { writeOrderProject } from './run-api.js'

const dir = join(TMP, 'prof')
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
try {
  const project = process.argv[2] ?? writeOrderProject(join(TMP, 'profile-project'))
  const server = await startFlowctl(project, { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir] })
  const route = process.env.BENCH_ROUTE ?? '/api/run/bench/create-order'
  const result = await loadOrders(server.url + route, {
    headers: { authorization: `Bearer ${BENCH_TOKEN}` },
    connections: Number(process.env.CONNECTIONS ?? 50),
  })
  console.log(`load: ${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms, non-2xx ${result.non2xx}`)
  // The profile is written when the process exits by itself: SIGINT lets serve close down.
  server.child.kill('SIGINT')
  await stopChild(server.child, 10000)
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))
  if (!files.length) throw new Error('no .cpuprofile written: did serve exit cleanly on SIGINT?')
  const top = topSelfTime(join(dir, files[0]), { root: ROOT + '/' })
  const show = (list, n) =>
    list.slice(0, n).forEach((f) => console.log(`  ${f.pct.toFixed(1).padStart(5)}%  ${f.ms.toFixed(0).padStart(6)} ms  ${f.name ?? ''} ${f.where ?? f.file}`))
  console.log(`\nself time, total ${top.totalMs.toFixed(0)} ms; top functions:`)
  show(top.functions, 30)
  console.log('\ntop functions in flowctl (dist/ ≙ src/):')
  show(
    top.functions.filter((f) => f.where.startsWith('dist/')),
    20,
  )
  console.log('\nself time by package / folder:')
  show(top.groups, 15)
  console.log('\nself time by file:')
  show(top.files, 25)
  console.log(`\nprofile: ${join(dir, files[0])}`)
} finally {
  await stopAll()
}
