// SPEC §22: parked runs hold no memory in `serve`. 10,000 async runs that park at a callback wait
// (their state goes to the store; nothing is kept per run in the process) against the baseline:
// 10,000 async runs of the same shape that finish at once, on a fresh `serve` each. RSS is read after
// start-up and a warm-up of 2,000 runs (V8 grows its heap under load until then, parking or not), then after the 10,000 runs and an idle pause (V8's memory
// reducer returns garbage ~10 s after the last GC). Target: parking adds less than 50 MB.
//   npm run build && node bench/parked-runs.js        (RUNS=N to change the count)
import { Agent } from 'node:http'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { startFlowctl } from './lib/servers.js'
import { httpRequest, rssMb, sleep, stopChild } from './lib/proc.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const RUNS = Number(process.env.RUNS ?? 10_000)
const WARM_UP = Number(process.env.WARM_UP ?? 2_000)
const IDLE_MS = 12_000
const fmtMb = (mb) => `${mb.toFixed(1)} MB`

const FLOW = (park) => `name: Job
nodes:
  - id: start
    type: start
    name: Start
    method: post
    respond: async
    inputs: { body: { type: object, properties: { n: { type: integer } } } }
    next: ${park ? 'wait' : 'done'}
${park ? '  - { id: wait, type: wait, name: Decision, until: callback, next: { out: done, timeout: done } }\n' : ''}  - { id: done, type: end, name: Done, body: { n: "{{start.n}}" } }
`

function writeProject(dir, park) {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(join(dir, 'flows'), { recursive: true })
  writeFileSync(join(dir, 'flowctl.yaml'), 'projectId: bench\nname: Bench\nlimits: { runsPerMinutePerIp: 0, asyncConcurrency: 16 }\n')
  writeFileSync(join(dir, 'flows', 'job.yaml'), FLOW(park))
  return dir
}

/** `count` runs from `first` on, 32 at a time; every answer must be 202. */
async function queueRuns(url, first, count) {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 })
  let next = first
  const sender = async () => {
    while (next < first + count) {
      const n = next++
      const res = await httpRequest(`${url}/api/run/bench/job`, {
        agent,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n }),
      })
      if (res.status !== 202) throw new Error(`run ${n} answered ${res.status}: ${res.body.slice(0, 200)}`)
    }
  }
  try {
    await Promise.all(Array.from({ length: 32 }, sender))
  } finally {
    agent.destroy()
  }
}

/** A gauge of /metrics for the project. */
async function gauge(url, name) {
  const res = await httpRequest(`${url}/metrics`)
  const match = new RegExp(`^${name}\\{project="bench"\\} (\\d+)`, 'm').exec(res.body)
  return match ? Number(match[1]) : NaN
}

/** Until every queued run has been taken: parked ones counted as waiting, the others finished. */
async function settle(url, park, total) {
  const deadline = Date.now() + 600_000
  while (Date.now() < deadline) {
    const queued = await gauge(url, 'flowctl_async_queue_depth')
    const waiting = await gauge(url, 'flowctl_waiting_runs')
    if (queued === 0 && (!park || waiting === total)) return waiting
    await sleep(250)
  }
  throw new Error('the runs did not settle within 10 minutes')
}

async function measure(park, log) {
  const flowctl = await startFlowctl(writeProject(join(TMP, park ? 'parked-runs' : 'parked-runs-baseline'), park), { probePath: '/api/run/bench/job' })
  try {
    await queueRuns(flowctl.url, 0, WARM_UP)
    await settle(flowctl.url, park, WARM_UP)
    await sleep(IDLE_MS)
    const before = rssMb(flowctl.child.pid)
    const began = performance.now()
    await queueRuns(flowctl.url, WARM_UP, RUNS)
    const waiting = await settle(flowctl.url, park, WARM_UP + RUNS)
    const seconds = (performance.now() - began) / 1000
    await sleep(IDLE_MS)
    const after = rssMb(flowctl.child.pid)
    log(
      `  ${park ? 'parked' : 'baseline (finished at once)'}: RSS ${fmtMb(before)} before, ${fmtMb(after)} after ${RUNS.toLocaleString('en')} runs (+${fmtMb(after - before)}; ${waiting} waiting; ${(RUNS / seconds).toFixed(0)} runs/s)`,
    )
    return { before, after, added: after - before }
  } finally {
    await stopChild(flowctl.child)
  }
}

export async function run({ log = console.log } = {}) {
  log(`[parked-runs] RSS of serve with ${RUNS.toLocaleString('en')} parked runs (baseline: the same runs finishing at once)`)
  requireFlowctl()
  const rows = []
  const notes = []
  try {
    const baseline = await measure(false, log)
    const parked = await measure(true, log)
    rows.push(
      row(
        `RSS added by ${RUNS.toLocaleString('en')} parked runs (baseline: as many async runs that finish)`,
        `+${fmtMb(parked.added)} (${fmtMb(parked.before)} → ${fmtMb(parked.after)})`,
        `+${fmtMb(baseline.added)} (${fmtMb(baseline.before)} → ${fmtMb(baseline.after)})`,
        fmtRatio(parked.after / baseline.after),
        '< 50 MB added',
        parked.added < 50,
      ),
    )
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row('RSS with parked runs', 'failed', '—', '—', '< 50 MB added', false))
  }
  return { name: 'parked-runs', rows, notes }
}

await runIfMain(import.meta.url, 'parked-runs', run)
