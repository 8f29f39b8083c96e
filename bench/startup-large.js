// 3b. Start-up of a large project: `flowctl serve` with 10,000 ordinary flows (the order flow of the
// Run API bench: bearer auth, a body schema, If, insert, End), timed from spawn until the last flow
// answers a valid POST with 201; with `warning` (STARTUP_WARNING=1 alone) every flow carries one
// `validate` warning, the case that was 3.6× the baseline while the fast path covered only clean files. Baseline: a plain script that reads and parses the same files with
// `yaml` (bench/lib/parse-baseline.js), spawned the same way. Alternating, ROUNDS each, medians.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { BENCH_DIR, TMP } from './lib/paths.js'
import { BENCH_TOKEN, flowFile, flowName, flowSlug, orderFlow, orderFlowWithWarning, writeProject } from './lib/project.js'
import { startFlowctl } from './lib/servers.js'
import { cpuMs, httpRequest, rssMb, stopChild } from './lib/proc.js'
import { median, ORDER_BODIES } from './lib/load.js'
import { fmtMs, fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const FLOWS = Number(process.env.STARTUP_FLOWS ?? 10000)
const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 3)
const TARGET = 1.3

function parseBaseline(flowsDir) {
  const started = performance.now()
  const result = spawnSync(process.execPath, [join(BENCH_DIR, 'lib', 'parse-baseline.js'), flowsDir], { encoding: 'utf8' })
  const ms = performance.now() - started
  const [nodes, cpu] = result.stdout.trim().split(' ').map(Number)
  if (result.status !== 0 || nodes !== FLOWS * 4) throw new Error(`parse baseline exited ${result.status}: ${result.stderr.slice(0, 300)}`)
  return { ms, cpu }
}

/** Spawn → the last flow answers 201 (probed with the real request, so a 404 while loading never counts). */
async function flowctlReady(projectDir, env) {
  const last = `/api/run/bench/${flowSlug(FLOWS - 1)}`
  const server = await startFlowctl(projectDir, { probePath: last, timeoutMs: 300000, env })
  try {
    const res = await httpRequest(server.url + last, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_TOKEN}` },
      body: ORDER_BODIES[0],
    })
    if (res.status !== 201) throw new Error(`the last flow answered ${res.status}: ${res.body.slice(0, 200)}`)
    return { ms: server.readyMs, cpu: cpuMs(server.child.pid), rss: rssMb(server.child.pid) }
  } finally {
    await stopChild(server.child)
  }
}

export async function run({ log = console.log, warning = process.env.STARTUP_WARNING === '1' } = {}) {
  const kind = warning ? 'order flows with a validate warning each' : 'order flows'
  log(`[startup-large] serve with ${FLOWS.toLocaleString('en')} ${kind} until the last one answers`)
  const rows = []
  const notes = []
  try {
    requireFlowctl()
    const make = warning ? orderFlowWithWarning : orderFlow
    const flows = Array.from({ length: FLOWS }, (_, i) => ({ file: flowFile(i), flow: make(flowName(i)) }))
    const dir = writeProject(join(TMP, warning ? 'startup-large-warning' : 'startup-large'), { flows })
    const env = warning ? { FLOWCTL_SECRET_BENCH_NOTE: 'x' } : {}
    parseBaseline(join(dir, 'flows')) // warm the file system cache
    const serve = []
    const parse = []
    for (let i = 0; i < ROUNDS; i++) {
      const base = parseBaseline(join(dir, 'flows'))
      const ready = await flowctlReady(dir, env)
      parse.push(base)
      serve.push(ready)
      log(
        `  round ${i + 1}: serve ready ${fmtMs(ready.ms)} (CPU ${fmtMs(ready.cpu)}, RSS ${ready.rss.toFixed(0)} MB); read + parse ${fmtMs(base.ms)} (CPU ${fmtMs(base.cpu)})`,
      )
    }
    const s = median(serve.map((r) => r.ms))
    const p = median(parse.map((r) => r.ms))
    const sCpu = median(serve.map((r) => r.cpu))
    const pCpu = median(parse.map((r) => r.cpu))
    const count = FLOWS.toLocaleString('en')
    rows.push(
      row(
        `serve with ${count} ${kind}, spawn → the last flow answers 201, median of ${ROUNDS} (baseline: node reads and parses the same files with yaml)`,
        fmtMs(s),
        fmtMs(p),
        fmtRatio(s / p),
        `≤ ${TARGET}×`,
        s / p <= TARGET,
      ),
    )
    rows.push(
      row(
        `serve with ${count} ${kind}: process CPU until ready, the steadier figure on a loaded machine (baseline: the same read + parse)`,
        fmtMs(sCpu),
        fmtMs(pCpu),
        fmtRatio(sCpu / pCpu),
        `≤ ${TARGET}×`,
        sCpu / pCpu <= TARGET,
      ),
    )
    notes.push(
      `serve ready ${serve.map((r) => fmtMs(r.ms)).join(' / ')} (CPU ${serve.map((r) => fmtMs(r.cpu)).join(' / ')}); read + parse ${parse.map((r) => fmtMs(r.ms)).join(' / ')} (CPU ${parse.map((r) => fmtMs(r.cpu)).join(' / ')}); serve RSS when ready ${serve.map((r) => r.rss.toFixed(0)).join(' / ')} MB`,
    )
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row(`serve with ${FLOWS.toLocaleString('en')} ${kind}`, 'failed', '—', '—', `≤ ${TARGET}×`, false))
  }
  return { name: warning ? 'startup-large (warnings)' : 'startup-large', rows, notes }
}

await runIfMain(import.meta.url, 'startup-large', run)
