// autocannon wrapper: one fixed load shape for every server, so the figures compare.
import autocannon from 'autocannon'
import { DURATION } from './paths.js'
import { cpuMs } from './proc.js'

/** Two order bodies, cycled, so both branches of the If (qty > 10) are taken. */
export const ORDER_BODIES = [JSON.stringify({ sku: 'A-1', qty: 5 }), JSON.stringify({ sku: 'B-2', qty: 42 })]

/**
 * POSTs the order bodies to `url` with 50 connections for `duration` seconds.
 * Returns { rps, p50, p99, non2xx, errors, timeouts, total }.
 */
export async function loadOrders(url, { headers = {}, duration = DURATION, connections = 50 } = {}) {
  const result = await autocannon({
    url,
    connections,
    duration,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    requests: ORDER_BODIES.map((body) => ({ method: 'POST', body })),
  })
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    total: result.requests.total,
    // e.g. { 503: 12 }: which statuses the non-2xx answers had
    statuses: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {})
        .filter(([code]) => !code.startsWith('2'))
        .map(([code, s]) => [code, s.count]),
    ),
  }
}

/**
 * Alternates the targets (A, B, A, B, …) `rounds` times after a 1-second warm-up each,
 * and returns per target { runs, rps, p50, p99, cpuUs, non2xx, errors } with the means of its runs
 * (cpuUs: the server's CPU µs per request when the target gives its `pid`; sideCpuUs: the same for
 * `target.sideCpuMs()`, another process the target depends on, such as the database server).
 */
export async function alternate(targets, { rounds = 2, log = console.log, connections = 50 } = {}) {
  for (const target of targets) await loadOrders(target.url, { headers: target.headers, duration: 1, connections })
  const runs = targets.map(() => [])
  for (let round = 0; round < rounds; round++) {
    for (const [i, target] of targets.entries()) {
      const cpuBefore = target.pid ? cpuMs(target.pid) : 0
      const sideBefore = target.sideCpuMs ? target.sideCpuMs() : 0
      const run = await loadOrders(target.url, { headers: target.headers, connections })
      run.sideCpuUs = target.sideCpuMs ? ((target.sideCpuMs() - sideBefore) * 1000) / Math.max(1, run.total) : NaN
      // CPU time of the server per request: far less sensitive to other load on the machine than req/s.
      run.cpuUs = target.pid ? ((cpuMs(target.pid) - cpuBefore) * 1000) / Math.max(1, run.total) : NaN
      runs[i].push(run)
      const cpu =
        (Number.isFinite(run.cpuUs) ? `, server CPU ${run.cpuUs.toFixed(0)} µs/req` : '') +
        (Number.isFinite(run.sideCpuUs) ? `, database CPU ${run.sideCpuUs.toFixed(0)} µs/req` : '')
      const codes = run.non2xx ? ` ${JSON.stringify(run.statuses)}` : ''
      log(
        `  ${target.name.padEnd(22)} round ${round + 1}: ${run.rps.toFixed(0)} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, non-2xx ${run.non2xx}${codes}, errors ${run.errors}${cpu}`,
      )
    }
  }
  return targets.map((target, i) => ({
    name: target.name,
    runs: runs[i],
    rps: mean(runs[i].map((r) => r.rps)),
    p50: mean(runs[i].map((r) => r.p50)),
    p99: mean(runs[i].map((r) => r.p99)),
    cpuUs: mean(runs[i].map((r) => r.cpuUs)),
    medianCpuUs: median(runs[i].map((r) => r.cpuUs)),
    medianRps: median(runs[i].map((r) => r.rps)),
    sideCpuUs: mean(runs[i].map((r) => r.sideCpuUs)),
    non2xx: sum(runs[i].map((r) => r.non2xx)),
    statuses: runs[i].reduce((all, r) => {
      for (const [c, n] of Object.entries(r.statuses)) all[c] = (all[c] ?? 0) + n
      return all
    }, {}),
    errors: sum(runs[i].map((r) => r.errors + r.timeouts)),
  }))
}

export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
export const sum = (xs) => xs.reduce((a, b) => a + b, 0)
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}
