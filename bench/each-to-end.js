// An `each` over 10,000 items, each calling a small flow (~710,000 steps), that runs to its end
// under the default run timeout, against a real `flowctl serve` (SPEC §18): the longest another
// client waits for GET /api/status meanwhile, and serve's RSS above its idle size. The baseline is
// the same client's longest wait with nothing else running. FLOWCTL_BENCH_BIN compares builds.
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { rssMb, sleep, stopChild } from './lib/proc.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { startFlowctl } from './lib/servers.js'

const BODY = 'inputs: { body: { type: object } }'
const FLOWS = {
  'fan.yaml': `name: Fan
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: item, next: done }
  - { id: done, type: end, name: Done, body: { failed: "{{ all.failed }}" } }
`,
  'item.yaml': `name: Item
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: inner }
  - { id: inner, type: call, name: Inner, flow: leaf, input: { n: "{{ start.n }}" }, next: ten }
  - { id: ten, type: set, name: Ten, values: { list: [{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }, { n: 6 }, { n: 7 }, { n: 8 }, { n: 9 }] }, next: parts }
  - { id: parts, type: each, name: Parts, items: "{{ ten.list }}", flow: leaf, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ inner.body.n }}", parts: "{{ parts.failed }}" } }
`,
  'leaf.yaml': `name: Leaf
nodes:
  - { id: start, type: start, name: Start, method: post, ${BODY}, next: a }
  - { id: a, type: set, name: A, values: { n: "{{ start.n }}", t: "item {{ start.n }}" }, next: b }
  - { id: b, type: set, name: B, values: { n: "{{ a.n }}", t: "{{ a.t }} b" }, next: c }
  - { id: c, type: set, name: C, values: { n: "{{ b.n }}", t: "{{ b.t }} c" }, next: d }
  - { id: d, type: set, name: D, values: { n: "{{ c.n }}", t: "{{ c.t }} d" }, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ d.n }}", t: "{{ d.t }}" } }
`,
}

/** Probes GET /api/status one after another until `until` settles; the longest wait and serve's peak RSS. */
async function probeWhile(url, pid, until) {
  let done = false
  let worstMs = 0
  let peakMb = rssMb(pid)
  const settled = until.finally(() => (done = true))
  while (!done) {
    const started = performance.now()
    const response = await fetch(`${url}/api/status`)
    await response.arrayBuffer()
    worstMs = Math.max(worstMs, performance.now() - started)
    peakMb = Math.max(peakMb, rssMb(pid))
    await sleep(5)
  }
  return { worstMs, peakMb, result: await settled }
}

export async function run() {
  const dir = join(TMP, 'each-to-end')
  await rm(dir, { recursive: true, force: true })
  await mkdir(join(dir, 'flows'), { recursive: true })
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: bench\nname: Bench\nlimits: { runsPerMinutePerIp: 0 }\n')
  for (const [name, text] of Object.entries(FLOWS)) await writeFile(join(dir, 'flows', name), text)
  const server = await startFlowctl(dir)
  const runs = Number(process.env.EACH_RUNS ?? 3)
  try {
    const body = JSON.stringify({ items: Array.from({ length: 10_000 }, (_, n) => ({ n })) })
    const idleMb = rssMb(server.child.pid)
    const idle = await probeWhile(server.url, server.child.pid, sleep(2000))
    const waits = []
    let growthMb = 0
    for (let i = 0; i < runs; i++) {
      const attack = fetch(`${server.url}/api/run/bench/fan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status)
      const measured = await probeWhile(server.url, server.child.pid, attack)
      if (measured.result !== 200) throw new Error(`the each answered ${measured.result}`)
      waits.push(measured.worstMs)
      growthMb = Math.max(growthMb, measured.peakMb - idleMb)
      await sleep(1000)
    }
    const worst = Math.max(...waits)
    return {
      name: 'each-to-end',
      rows: [
        row('idle: longest wait for GET /api/status (baseline)', `${idle.worstMs.toFixed(0)} ms`, '—', '1.00×', 'info', null),
        row(
          'each of 10,000 sub-flow calls run to its end: longest wait of another client',
          `${worst.toFixed(0)} ms (runs: ${waits.map((ms) => ms.toFixed(0)).join(', ')})`,
          `${idle.worstMs.toFixed(0)} ms`,
          fmtRatio(worst / idle.worstMs),
          '< 100 ms',
          worst < 100,
        ),
        row(
          'the same: serve RSS above idle, highest of the runs',
          `${growthMb.toFixed(0)} MB`,
          `${idleMb.toFixed(0)} MB idle`,
          '—',
          '< 512 MB',
          growthMb < 512,
        ),
      ],
      notes: [`${runs} runs, one at a time, default runTimeoutMs and history keep: all`],
    }
  } finally {
    await stopChild(server.child)
  }
}

await runIfMain(import.meta.url, 'each-to-end', run)
