// 1. Run API throughput: the order flow under autocannon against a plain h3 route, alternating
// baseline, flowctl, baseline, flowctl; then the same with PostgreSQL as the store.
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { BENCH_TOKEN, orderFlow, writeProject } from './lib/project.js'
import { startBaseline, startFlowctl } from './lib/servers.js'
import { commandCpuMs, httpRequest, stopChild } from './lib/proc.js'
import { alternate, ORDER_BODIES } from './lib/load.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { freshPostgresDatabase, newestRun, reachablePostgres, requireFlowctl } from './lib/flowctl-check.js'

const ROUTE = '/api/run/bench/create-order'
const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` }

export function writeOrderProject(dir = join(TMP, 'project')) {
  return writeProject(dir, { flows: [{ file: 'create-order.yaml', flow: orderFlow() }] })
}

/** One request first: the flow must answer 201 { id: string, ok: true } before we load it. */
export async function checkOrderResponse(url, headers = AUTH) {
  const res = await httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: ORDER_BODIES[1] })
  let body
  try {
    body = JSON.parse(res.body)
  } catch {
    body = res.body
  }
  if (res.status !== 201 || typeof body?.id !== 'string' || body?.ok !== true) {
    throw new Error(`expected 201 { id, ok: true } from ${url}, got ${res.status} ${res.body.slice(0, 300)}`)
  }
}

/**
 * The local database server's CPU, when it runs on this machine (PostgreSQL's processes are named
 * `postgres`): it shares the cores with the load generator and flowctl, so it is part of the cost.
 */
function localDatabaseCpu(env) {
  const url = env.FLOWCTL_DATABASE_URL
  if (!url) return undefined
  const host = new URL(url).hostname
  if (!['127.0.0.1', 'localhost', '::1', '[::1]', ''].includes(host)) return undefined
  return commandCpuMs('postgres') > 0 ? () => commandCpuMs('postgres') : undefined
}

async function measureStore(label, dir, baseline, env, rows, notes, log) {
  const flowctl = await startFlowctl(dir, { env })
  try {
    await checkOrderResponse(flowctl.url + ROUTE)
    const [base, flow] = await alternate(
      [
        { name: 'h3 baseline', url: baseline.url + '/order', pid: baseline.child.pid },
        { name: `flowctl (${label})`, url: flowctl.url + ROUTE, headers: AUTH, pid: flowctl.child.pid, sideCpuMs: localDatabaseCpu(env) },
      ],
      { log },
    )
    const ratio = flow.rps / base.rps
    rows.push(
      row(
        `Run API throughput, ${label} (req/s, mean of 2; baseline raw h3)`,
        `${flow.rps.toFixed(0)} req/s`,
        `${base.rps.toFixed(0)} req/s`,
        fmtRatio(ratio),
        '≥ 0.50×',
        ratio >= 0.5,
      ),
    )
    rows.push(
      row(
        `Run API latency p50 / p99, ${label}`,
        `${flow.p50.toFixed(1)} / ${flow.p99.toFixed(1)} ms`,
        `${base.p50.toFixed(1)} / ${base.p99.toFixed(1)} ms`,
        fmtRatio(flow.p99 / base.p99) + ' (p99)',
        '—',
        null,
      ),
    )
    rows.push(
      row(
        `Run API server CPU per request, ${label}`,
        `${flow.cpuUs.toFixed(0)} µs`,
        `${base.cpuUs.toFixed(0)} µs`,
        fmtRatio(flow.cpuUs / base.cpuUs),
        '—',
        null,
      ),
    )
    if (Number.isFinite(flow.sideCpuUs)) {
      rows.push(row(`Run API database server CPU per request, ${label} (same machine)`, `${flow.sideCpuUs.toFixed(0)} µs`, '—', '—', '—', null))
    }
    const bad = flow.non2xx + flow.errors
    rows.push(row(`Run API non-2xx + socket errors, ${label}`, String(bad), String(base.non2xx + base.errors), '—', '0', bad === 0))
    if (flow.non2xx) notes.push(`${label}: non-2xx statuses ${JSON.stringify(flow.statuses)}`)
  } finally {
    await stopChild(flowctl.child)
  }
  // History is read after the server stopped: every answered run must already be committed.
  const newest = newestRun(dir, env)
  const ok = newest !== null && newest.flow === 'create-order' && newest.status === 'success'
  rows.push(
    row(
      `History recorded under load, ${label}`,
      newest ? `${newest.flow} ${newest.status} ${newest.httpStatus}` : 'no record',
      '—',
      '—',
      'newest record present',
      ok,
    ),
  )
  if (!ok) notes.push(`${label}: newest history record: ${JSON.stringify(newest)}`)
}

async function measureOrNote(label, dir, baseline, env, rows, notes, log) {
  try {
    await measureStore(label, dir, baseline, env, rows, notes, log)
  } catch (error) {
    log(`  flowctl (${label}) failed: ${error.message}`)
    notes.push(`flowctl (${label}) failed: ${error.message.split('\n')[0]}`)
    rows.push(row(`Run API throughput, ${label}`, 'failed', '—', '—', '≥ 0.50×', false))
  }
}

export async function run({ log = console.log } = {}) {
  const rows = []
  const notes = []
  log('[run-api] Run API throughput')
  const baseline = await startBaseline()
  try {
    requireFlowctl()
    const dir = writeOrderProject()
    await measureOrNote('SQLite', dir, baseline, {}, rows, notes, log)
    const pgUrl = await reachablePostgres()
    if (pgUrl) {
      writeOrderProject(dir) // fresh project; the runs go to a fresh PostgreSQL database
      const database = await freshPostgresDatabase(pgUrl)
      try {
        await measureOrNote('PostgreSQL', dir, baseline, { FLOWCTL_DATABASE_URL: database.url }, rows, notes, log)
      } finally {
        await database.drop().catch((error) => notes.push(`could not drop the benchmark database: ${error.message}`))
      }
      notes.push(`PostgreSQL measured in a fresh database beside ${pgUrl.replace(/\/\/[^@]*@/, '//…@')}`)
    } else {
      const msg = 'PostgreSQL skipped: no server answered at FLOWCTL_BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test'
      log('  ' + msg)
      notes.push(msg)
    }
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row('Run API throughput', 'failed', '—', '—', '≥ 0.50×', false))
  } finally {
    await stopChild(baseline.child)
  }
  return { name: 'run-api', rows, notes }
}

await runIfMain(import.meta.url, 'run-api', run)
