// Issue 20's hostile reproductions against the built app (dist/), in-process through app.fetch:
// per phase the time per request against plain requests measured in the same run (the baseline),
// the longest the event loop was blocked (perf_hooks.monitorEventLoopDelay) and the peak RSS.
// Targets: RSS under 300 MB, no event-loop block over 100 ms.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { ROOT } from './lib/paths.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'

const FLOWS = {
  'pattern.yaml': `name: Pattern
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { s: { type: string, pattern: "^(a+)+$" } } } }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'nap.yaml': `name: Nap
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { ms: { type: string } } } }, next: nap }
  - { id: nap, type: wait, name: Nap, ms: "{{ start.ms }}", next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'strict.yaml': `name: Strict
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, additionalProperties: false, properties: { a: { type: string } } } }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
}

async function makeApp() {
  const dir = await mkdtemp(join(tmpdir(), 'flowctl-bench-hostile-'))
  await cp(join(ROOT, 'fixtures', 'example'), dir, { recursive: true, filter: (source) => !source.endsWith('/.flowctl') })
  for (const [name, text] of Object.entries(FLOWS)) await writeFile(join(dir, 'flows', name), text)
  const settings = await readFile(join(dir, 'flowctl.yaml'), 'utf8')
  await writeFile(join(dir, 'flowctl.yaml'), settings.replace('runsPerMinutePerIp: 600', 'runsPerMinutePerIp: 1000000'))
  const { createApp } = await import(join(ROOT, 'dist/http/app.js'))
  const { Workspace } = await import(join(ROOT, 'dist/serve/workspace.js'))
  const { loadProject } = await import(join(ROOT, 'dist/project/load.js'))
  const { openProjectStore } = await import(join(ROOT, 'dist/serve/project-store.js'))
  const workspace = new Workspace((p) => openProjectStore(p, { env: {} }))
  await workspace.add(await loadProject(dir, { env: {} }))
  const app = createApp(workspace, { trustProxy: 1, quiet: true, usersFile: join(dir, 'users.yaml'), fallbackClientIp: '10.0.0.1' })
  return {
    app,
    close: async () => {
      await workspace.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

async function phase(app, count, makeRequest) {
  const delay = monitorEventLoopDelay({ resolution: 1 })
  let peak = process.memoryUsage().rss
  delay.enable()
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    const response = await app.fetch(makeRequest(i))
    await response.arrayBuffer()
    if (response.status >= 500 && response.status !== 500) throw new Error(`unexpected ${response.status}`)
    if (i % 200 === 0) peak = Math.max(peak, process.memoryUsage().rss)
    // An answer without I/O settles in microtasks only: let the loop turn, so the delay monitor
    // samples between requests and its maximum is the longest single request's block.
    await new Promise((resolve) => setImmediate(resolve))
  }
  const msPerRequest = (performance.now() - started) / count
  delay.disable()
  return { msPerRequest, maxDelayMs: delay.max / 1e6, peakMb: Math.max(peak, process.memoryUsage().rss) / 2 ** 20 }
}

const post = (path, body, headers = {}) =>
  new Request(`http://localhost${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })

export async function run() {
  const { app, close } = await makeApp()
  const N = Number(process.env.HOSTILE_REQUESTS ?? 2000)
  try {
    // Warm-up: compile every flow's validators once.
    await phase(app, 50, () => new Request('http://localhost/api/run/shop/order-status/open'))
    for (const slug of ['pattern', 'nap', 'strict']) await app.fetch(post(`/api/run/shop/${slug}`, '{}'))
    const baseline = await phase(app, N, () => new Request('http://localhost/api/run/shop/order-status/open'))
    const junk = 'y'.repeat(14_000)
    const phases = {
      'limiter flood (14 KB X-Forwarded-For, new value each request)': await phase(
        app,
        N,
        (i) => new Request('http://localhost/api/run/shop/order-status/open', { headers: { 'x-forwarded-for': `${junk}${i}, ${junk}` } }),
      ),
      'ReDoS ^(a+)+$ with a*32+!': await phase(app, N, () => post('/api/run/shop/pattern', JSON.stringify({ s: `${'a'.repeat(32)}!` }))),
      'huge error (1 MB quoted in a failure reason)': await phase(app, Math.ceil(N / 10), () =>
        post('/api/run/shop/nap', JSON.stringify({ ms: 'z'.repeat(1_000_000) })),
      ),
      '400 with 5,000 errors': await phase(app, Math.ceil(N / 10), () =>
        post('/api/run/shop/strict', JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])))),
      ),
    }
    const rows = [row('plain GET (baseline)', `${baseline.msPerRequest.toFixed(2)} ms/req`, '—', '1.00×', 'info', null)]
    for (const [name, result] of Object.entries(phases)) {
      rows.push(
        row(
          `${name}: ms per request`,
          `${result.msPerRequest.toFixed(2)} ms`,
          `${baseline.msPerRequest.toFixed(2)} ms`,
          fmtRatio(result.msPerRequest / baseline.msPerRequest),
          'info',
          null,
        ),
      )
      rows.push(
        row(
          `${name}: longest event-loop block`,
          `${result.maxDelayMs.toFixed(0)} ms`,
          `${baseline.maxDelayMs.toFixed(0)} ms`,
          fmtRatio(result.maxDelayMs / baseline.maxDelayMs),
          '< 100 ms',
          result.maxDelayMs < 100,
        ),
      )
      rows.push(
        row(
          `${name}: peak RSS`,
          `${result.peakMb.toFixed(0)} MB`,
          `${baseline.peakMb.toFixed(0)} MB`,
          fmtRatio(result.peakMb / baseline.peakMb),
          '< 300 MB',
          result.peakMb < 300,
        ),
      )
    }
    return { name: 'hostile', rows, notes: [`${N} requests per phase (a tenth for the 1 MB and 5,000-error bodies), in-process app.fetch, embedded store`] }
  } finally {
    await close()
  }
}

await runIfMain(import.meta.url, 'hostile', run)
