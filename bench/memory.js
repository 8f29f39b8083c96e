// 6. Memory: RSS of `flowctl serve` with 1,000 flows, after start-up, 12 s later (idle) and after 200 requests spread
// over the flows; baseline: the plain h3 server of run-api.js after the same 200 requests. Also
// `serve` with one flow after start-up: what the process holds before any flow (modules, listhen).
import { Agent } from 'node:http'
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { BENCH_TOKEN, flowFile, flowName, flowSlug, orderFlow, writeProject } from './lib/project.js'
import { startBaseline, startFlowctl } from './lib/servers.js'
import { httpRequest, rssMb, sleep, stopChild } from './lib/proc.js'
import { ORDER_BODIES } from './lib/load.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const FLOWS = 1000
/** RSS of serve after start-up against the plain h3 server after start-up. */
const TARGET = 1.5
const REQUESTS = 200
/** Idle time before the second RSS reading (V8's memory reducer starts ~8 s after the last GC). */
const IDLE_MS = 12_000
const fmtMb = (mb) => `${mb.toFixed(1)} MB`

/** 200 POSTs, 10 at a time; `pathOf(i)` picks the route of request i. Every answer must be 201. */
async function spreadRequests(url, pathOf, headers) {
  const agent = new Agent({ keepAlive: true, maxSockets: 10 })
  const send = async (i) => {
    const res = await httpRequest(url + pathOf(i), {
      agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: ORDER_BODIES[i % 2],
    })
    if (res.status !== 201) throw new Error(`${pathOf(i)} answered ${res.status}: ${res.body.slice(0, 200)}`)
  }
  try {
    for (let i = 0; i < REQUESTS; i += 10) await Promise.all(Array.from({ length: 10 }, (_, k) => send(i + k)))
  } finally {
    agent.destroy()
  }
  await sleep(200)
}

export async function run({ log = console.log } = {}) {
  log(`[memory] RSS with ${FLOWS.toLocaleString('en')} flows`)
  const rows = []
  const notes = []
  const baseline = await startBaseline()
  let flowctl
  try {
    const baseStart = rssMb(baseline.child.pid)
    await spreadRequests(baseline.url, () => '/order', {})
    const baseAfter = rssMb(baseline.child.pid)
    requireFlowctl()
    const flows = Array.from({ length: FLOWS }, (_, i) => ({ file: flowFile(i), flow: orderFlow(flowName(i)) }))
    const one = await startFlowctl(writeProject(join(TMP, 'memory-one'), { flows: flows.slice(0, 1) }))
    await sleep(200)
    const oneFlow = rssMb(one.child.pid)
    await stopChild(one.child)
    flowctl = await startFlowctl(writeProject(join(TMP, 'memory'), { flows }), { timeoutMs: 180000 })
    await sleep(200)
    const start = rssMb(flowctl.child.pid)
    // Start-up leaves garbage in V8's old space that its memory reducer returns once the process
    // has been idle for about 10 s: RSS then is what a server nobody calls holds for its life.
    await sleep(IDLE_MS)
    const settled = rssMb(flowctl.child.pid)
    // Flow i*5 for request i: 200 distinct flows, spread over the whole project.
    await spreadRequests(flowctl.url, (i) => `/api/run/bench/${flowSlug((i * 5) % FLOWS)}`, { authorization: `Bearer ${BENCH_TOKEN}` })
    const after = rssMb(flowctl.child.pid)
    log(
      `  flowctl: ${fmtMb(start)} after start-up (${flowctl.readyMs.toFixed(0)} ms), ${fmtMb(settled)} ${IDLE_MS / 1000} s later, ${fmtMb(after)} after ${REQUESTS} requests; h3 baseline: ${fmtMb(baseStart)} / ${fmtMb(baseAfter)}`,
    )
    rows.push(
      row('RSS of serve with one flow after start-up (baseline: plain h3 server)', fmtMb(oneFlow), fmtMb(baseStart), fmtRatio(oneFlow / baseStart), '—', null),
    )
    rows.push(
      row(
        `RSS after start-up, ${FLOWS.toLocaleString('en')} flows (baseline: plain h3 server)`,
        fmtMb(start),
        fmtMb(baseStart),
        fmtRatio(start / baseStart),
        `≤ ${TARGET}×`,
        start / baseStart <= TARGET,
      ),
    )
    rows.push(
      row(
        `RSS after start-up and ${IDLE_MS / 1000} s idle, ${FLOWS.toLocaleString('en')} flows (baseline: plain h3 server after start-up)`,
        fmtMb(settled),
        fmtMb(baseStart),
        fmtRatio(settled / baseStart),
        '—',
        null,
      ),
    )
    rows.push(
      row(
        `RSS after ${REQUESTS} requests over ${REQUESTS} flows (baseline: plain h3 server)`,
        fmtMb(after),
        fmtMb(baseAfter),
        fmtRatio(after / baseAfter),
        '< 200 MB',
        after < 200,
      ),
    )
    notes.push(`serve with ${FLOWS.toLocaleString('en')} order flows answered after ${flowctl.readyMs.toFixed(0)} ms`)
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row('RSS with 1,000 flows', 'failed', '—', '—', '< 200 MB', false))
  } finally {
    await stopChild(flowctl?.child)
    await stopChild(baseline.child)
  }
  return { name: 'memory', rows, notes }
}

await runIfMain(import.meta.url, 'memory', run)
