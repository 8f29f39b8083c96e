// On demand, not part of run-all: `node bench/engine-cpu.js` measures what the engine and the store
// cost per run without HTTP: runFlow (the public API) on the order flow of run-api.js, RUNS runs
// (default 30,000) with CONCURRENCY (default 20) at once, so SQLite's group commit batches as under
// load. It prints the process's CPU µs per run (user + system) for three rounds. Set FLOW=ping for
// Start → End and KEEP=all|failed|none for history.keep. Compare it with the Run API's server CPU per
// request (ab-builds.js) to see how much of a request the engine and the store are.
import { join } from 'node:path'
import { loadProject, openProjectStore, runFlow } from '../dist/index.js'
import { TMP } from './lib/paths.js'
import { BENCH_TOKEN, orderFlow, trivialFlow, writeProject } from './lib/project.js'
import { ORDER_BODIES } from './lib/load.js'

const RUNS = Number(process.env.RUNS ?? 30_000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 20)
const ping = process.env.FLOW === 'ping'
const keep = process.env.KEEP ?? 'all'
const slug = ping ? 'ping' : 'create-order'
const dir = writeProject(join(TMP, 'engine-cpu'), {
  flows: [{ file: `${slug}.yaml`, flow: ping ? trivialFlow('Ping') : orderFlow() }],
  extra: { history: { keep } },
})
const project = await loadProject(dir)
const store = await openProjectStore(project)
const flow = project.flows.get(slug)
const bodies = ORDER_BODIES.map((text) => JSON.parse(text))
const headers = { authorization: `Bearer ${BENCH_TOKEN}` }

let next = 0
async function caller() {
  while (next < RUNS) {
    const i = next++
    const outcome = await runFlow({ project, flow, store, trigger: 'http', method: 'POST', input: { body: bodies[i % 2], headers, query: {} } })
    if (outcome.kind !== 'response' || outcome.status >= 300) throw new Error(`run ${i}: ${JSON.stringify(outcome).slice(0, 300)}`)
  }
}

console.log(`${ping ? 'Start → End' : 'order flow'}, history.keep ${keep}, ${RUNS} runs, ${CONCURRENCY} at once`)
for (let round = 1; round <= 3; round++) {
  next = 0
  const cpu = process.cpuUsage()
  const began = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, caller))
  const used = process.cpuUsage(cpu)
  const ms = performance.now() - began
  const us = (x) => (x / RUNS).toFixed(1)
  console.log(
    `  round ${round}: ${us(used.user + used.system)} µs CPU per run (user ${us(used.user)}, system ${us(used.system)}), ${Math.round((RUNS / ms) * 1000)} runs/s`,
  )
}
await store.close()
