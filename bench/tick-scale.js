// 4. Scheduler tick cost: an idle `POST /api/cron/tick` on projects with 100, 1,000 and 10,000
// scheduled (not due) flows, against a 404 request to the same server in the same run; then one
// tick with 100 due flows.
import { Agent } from 'node:http'
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { flowFile, flowName, notDueCron, trivialFlow, writeProject } from './lib/project.js'
import { flowctlSync, startFlowctl } from './lib/servers.js'
import { httpRequest, stopChild } from './lib/proc.js'
import { median, percentile } from './lib/load.js'
import { fmtMs, fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const SIZES = [100, 1000, 10000]
const SAMPLES = 200
const CRON_SECRET = 'bench-cron-secret'
const CRON_ENV = { CRON_SECRET }

function writeScheduledProject(name, count, cronOf) {
  const flows = []
  for (let i = 0; i < count; i++) flows.push({ file: flowFile(i), flow: trivialFlow(flowName(i), { cron: cronOf(i) }) })
  return writeProject(join(TMP, name), { flows })
}

/** One timed request on a keep-alive socket; returns { ms, status, body }. */
async function timedRequest(agent, url, options) {
  const started = performance.now()
  const res = await httpRequest(url, { agent, ...options })
  return { ms: performance.now() - started, status: res.status, body: res.body }
}

const tick = (agent, server) => timedRequest(agent, server.url + '/api/cron/tick', { method: 'POST', headers: { 'x-cron-secret': CRON_SECRET } })
const notFound = (agent, server) => timedRequest(agent, server.url + '/api/run/bench/nope')

/** Interleaves idle ticks and 404s; every tick must answer 200 with ran 0. */
async function measureIdle(server, samples) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const ticks = []
  const misses = []
  try {
    for (let i = 0; i < 20 + samples; i++) {
      const t = await tick(agent, server)
      const n = await notFound(agent, server)
      if (t.status !== 200) throw new Error(`tick answered ${t.status}: ${t.body.slice(0, 300)}`)
      if (n.status !== 404) throw new Error(`GET /api/run/bench/nope answered ${n.status}`)
      const ran = JSON.parse(t.body).ran
      if (ran !== 0) throw new Error(`an idle tick ran ${ran} flows: ${t.body}`)
      if (i >= 20) {
        ticks.push(t.ms)
        misses.push(n.ms)
      }
    }
  } finally {
    agent.destroy()
  }
  return { tick: { p50: median(ticks), p99: percentile(ticks, 99) }, notFound: { p50: median(misses), p99: percentile(misses, 99) } }
}

async function idleScale(rows, notes, log) {
  const ratios = []
  for (const size of SIZES) {
    const dir = writeScheduledProject(`tick-${size}`, size, (i) => notDueCron(i))
    const server = await startFlowctl(dir, { env: CRON_ENV, timeoutMs: 300000 })
    try {
      const m = await measureIdle(server, SAMPLES)
      const ratio = m.tick.p50 / m.notFound.p50
      ratios.push(ratio)
      log(
        `  ${size} flows: ready in ${fmtMs(server.readyMs)}; idle tick p50 ${fmtMs(m.tick.p50)} p99 ${fmtMs(m.tick.p99)}; 404 p50 ${fmtMs(m.notFound.p50)} p99 ${fmtMs(m.notFound.p99)}; ratio ${fmtRatio(ratio)}`,
      )
      rows.push(
        row(
          `Idle tick, ${size.toLocaleString('en')} scheduled flows, p50 / p99 (baseline: 404 on the same server)`,
          `${fmtMs(m.tick.p50)} / ${fmtMs(m.tick.p99)}`,
          `${fmtMs(m.notFound.p50)} / ${fmtMs(m.notFound.p99)}`,
          fmtRatio(ratio),
          '≤ 3×',
          ratio <= 3,
        ),
      )
      notes.push(`serve with ${size.toLocaleString('en')} flows answered after ${fmtMs(server.readyMs)}`)
    } finally {
      await stopChild(server.child)
    }
  }
  // "Flat": the ratio at 10,000 flows stays within 1.5× of the ratio at 100 flows.
  const flat = ratios[2] / ratios[0]
  rows.push(
    row(
      'Idle tick flatness: tick/404 at 100 / 1,000 / 10,000 flows',
      ratios.map(fmtRatio).join(' / '),
      '—',
      fmtRatio(flat) + ' (10k vs 100)',
      'flat (≤ 1.5×)',
      flat <= 1.5,
    ),
  )
}

/** 100 due flows: the first tick of a minute on a fresh store runs them all. */
async function dueTick(rows, notes, log) {
  const dir = writeScheduledProject('tick-due', 100, () => '* * * * *')
  const server = await startFlowctl(dir, { env: CRON_ENV })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  let due
  const idle = []
  try {
    await notFound(agent, server) // open the keep-alive socket first
    due = await tick(agent, server)
    const summary = JSON.parse(due.body)
    if (due.status !== 200 || summary.ran !== 100 || summary.errors !== 0) throw new Error(`first tick: ${due.status} ${due.body}`)
    for (let i = 0; i < 30; i++) {
      const t = await tick(agent, server)
      if (JSON.parse(t.body).ran === 0) idle.push(t.ms) // a tick that crossed into a new minute is not idle
    }
  } finally {
    agent.destroy()
    await stopChild(server.child)
  }
  const idleMs = median(idle)
  log(`  100 due flows: first tick ${fmtMs(due.ms)}; later ticks of that minute (already claimed) p50 ${fmtMs(idleMs)}`)
  rows.push(
    row(
      'Tick with 100 due flows over HTTP, one sample (baseline: a later tick of the same minute, already claimed)',
      fmtMs(due.ms),
      fmtMs(idleMs),
      fmtRatio(due.ms / idleMs),
      '—',
      null,
    ),
  )
  notes.push(
    `100 due flows over HTTP: ${((due.ms - idleMs) / 100).toFixed(2)} ms per scheduled run (first tick of the minute on a fresh store; ${idle.length} later ticks of the same minute ran nothing)`,
  )

  // The same through the CLI, three fresh minutes, against a CLI tick of 100 flows not due. The
  // minutes are in the past: `tick --at` refuses the future (it would claim minutes before they come).
  const idleDir = join(TMP, 'tick-100')
  const minute = (k) => new Date(Math.floor(Date.now() / 60000) * 60000 - k * 60000).toISOString()
  const dueTimes = []
  const idleTimes = []
  for (let k = 2; k < 5; k++) {
    const d = flowctlSync(['tick', '--project', dir, '--at', minute(k), '--json'])
    const i = flowctlSync(['tick', '--project', idleDir, '--at', minute(k), '--json'])
    if (d.status !== 0 || JSON.parse(d.stdout).ran !== 100) throw new Error(`flowctl tick (due) exited ${d.status}: ${d.stdout}${d.stderr}`)
    if (i.status !== 0 || JSON.parse(i.stdout).ran !== 0) throw new Error(`flowctl tick (idle) exited ${i.status}: ${i.stdout}${i.stderr}`)
    dueTimes.push(d.ms)
    idleTimes.push(i.ms)
  }
  const d = median(dueTimes)
  const i = median(idleTimes)
  log(`  flowctl tick --at (CLI, median of 3): 100 due ${fmtMs(d)}, 100 not due ${fmtMs(i)}`)
  rows.push(row('`flowctl tick --at` with 100 due flows, median of 3 (baseline: same CLI, 100 flows not due)', fmtMs(d), fmtMs(i), fmtRatio(d / i), '—', null))
}

export async function run({ log = console.log } = {}) {
  log('[tick-scale] scheduler tick cost')
  const rows = []
  const notes = []
  try {
    requireFlowctl()
    await idleScale(rows, notes, log)
    await dueTick(rows, notes, log)
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row('Scheduler tick', 'failed', '—', '—', '≤ 3×', false))
  }
  return { name: 'tick-scale', rows, notes }
}

await runIfMain(import.meta.url, 'tick-scale', run)
