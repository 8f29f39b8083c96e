// SPEC §18's hostile corpus against a real `flowctl serve`: per case, a well-behaved client calls a
// small flow one request after another while the hostile request runs, and the benchmark prints the
// worst wait that client saw, the peak RSS of serve and the processes it started (its expression
// workers), and the hostile run's outcome (status and the reason history recorded). The baseline is
// the same client for the same time without the attack, measured in the same run.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sleep, stopChild } from './lib/proc.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { startFlowctl } from './lib/servers.js'
import { CASES, FLOWS, PROJECT_SETTINGS } from './lib/hostile-cases.js'

/** RSS of a process and its descendants, in bytes (Linux /proc). */
function treeRss(pid) {
  let total = 0
  try {
    total = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) total += treeRss(Number(child))
    }
  } catch {
    // The process ended while it was read.
  }
  return total
}

/** Calls `probe` back to back until `done()`; returns the worst and the median wait, in ms. */
async function probeUntil(probe, done) {
  const waits = []
  while (!done()) {
    const started = performance.now()
    const response = await probe()
    await response.arrayBuffer()
    waits.push(performance.now() - started)
    await sleep(5)
  }
  waits.sort((a, b) => a - b)
  return { worst: waits.at(-1) ?? 0, median: waits[Math.floor(waits.length / 2)] ?? 0, count: waits.length }
}

/** A local upstream for http cases: answers 503 (so retries retry) and counts the requests it saw. */
function startUpstream() {
  let seen = 0
  const server = createServer((request, response) => {
    seen++
    request.resume()
    response.writeHead(503, { 'content-type': 'application/json' }).end('{"ok":false}')
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}`, seen: () => seen })))
}

export async function run() {
  const upstream = await startUpstream()
  const dirs = Object.entries(PROJECT_SETTINGS).map(([projectId, settings]) => {
    const dir = mkdtempSync(join(tmpdir(), `flowctl-bench-hostile-${projectId}-`))
    mkdirSync(join(dir, 'flows'))
    writeFileSync(join(dir, 'flowctl.yaml'), `projectId: ${projectId}\nname: ${projectId}\n${settings}\n`)
    writeFileSync(join(dir, '.env'), `UPSTREAM=${upstream.url}\n`)
    for (const [slug, text] of Object.entries(FLOWS[projectId])) writeFileSync(join(dir, 'flows', `${slug}.yaml`), text)
    return dir
  })
  const serve = await startFlowctl(dirs[0], { extraArgs: dirs.slice(1), probePath: '/api/status' })
  const probe = () => fetch(`${serve.url}/api/run/hostile/ping`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"items":[1,2,3]}' })
  const rows = []
  try {
    for (let i = 0; i < 20; i++) await (await probe()).arrayBuffer()
    const idleRss = treeRss(serve.child.pid)
    let until = performance.now() + 1000
    const baseline = await probeUntil(probe, () => performance.now() > until)
    rows.push(
      row('well-behaved client alone (baseline)', `worst ${baseline.worst.toFixed(0)} ms`, `median ${baseline.median.toFixed(1)} ms`, '—', 'info', null),
    )
    for (const hostileCase of CASES) {
      let finished = false
      let peak = treeRss(serve.child.pid)
      const sampler = setInterval(() => (peak = Math.max(peak, treeRss(serve.child.pid))), 20)
      const attack = hostileCase.attack({ url: serve.url, upstream }).finally(() => (finished = true))
      const seen = await probeUntil(probe, () => finished)
      const outcome = await attack
      clearInterval(sampler)
      const growthMb = (peak - idleRss) / 2 ** 20
      const ok = seen.worst < 100 && growthMb < 512 && outcome.expected
      rows.push(
        row(
          `${hostileCase.name} → ${outcome.text}`,
          `worst ${seen.worst.toFixed(0)} ms, RSS +${growthMb.toFixed(0)} MB`,
          `worst ${baseline.worst.toFixed(0)} ms`,
          fmtRatio(seen.worst / baseline.worst),
          '< 100 ms, < +512 MB, the reason SPEC §18 names',
          ok,
        ),
      )
      until = performance.now() + 200
      await probeUntil(probe, () => performance.now() > until)
    }
  } finally {
    await stopChild(serve.child)
    upstream.server.close()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
  return {
    name: 'hostile corpus',
    rows,
    notes: [
      `idle RSS is serve and its processes before the first attack; the client calls a Start → End flow with a small expression, 5 ms apart; upstream requests seen by the local upstream: ${upstream.seen()}`,
    ],
  }
}

await runIfMain(import.meta.url, 'hostile-corpus', run)
