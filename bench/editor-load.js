// The browser editor's load time: `/edit/<projectId>/<slug>` of a 40-node flow in headless Chromium,
// from navigation until the canvas shows all 40 nodes (the bundle parsed, the kinds and the flow
// file fetched, the graph laid out and drawn). Baseline, measured in the same run: the existing flow
// page `/flows/<projectId>/<slug>` of the same flow until its server-drawn graph is there. Each load
// is a fresh browser context (nothing cached), alternating, median of RUNS. Target: canvas within 1 s.
// Needs a Chromium: FLOWCTL_TEST_CHROMIUM, else /usr/bin/chromium.
import { existsSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { median } from './lib/load.js'
import { writeProject } from './lib/project.js'
import { fmtMs, fmtRatio, row, runIfMain } from './lib/results.js'
import { startFlowctl } from './lib/servers.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const RUNS = 7
const NODES = 40
const TARGET_MS = 1000

/** Start → 19 set/if pairs (each if's two ports meet at the next set) → End: 40 nodes, 58 edges. */
export function bigFlow() {
  const nodes = [{ id: 'start', type: 'start', name: 'Start', method: 'post', next: 'set1' }]
  const pairs = (NODES - 2) / 2
  for (let i = 1; i <= pairs; i++) {
    const after = i === pairs ? 'done' : `set${i + 1}`
    nodes.push({ id: `set${i}`, type: 'set', name: `Set ${i}`, values: { step: i, from: '{{ run.id }}' }, next: `check${i}` })
    nodes.push({
      id: `check${i}`,
      type: 'if',
      name: `Check ${i}`,
      condition: { left: `{{ set_${i}.step }}`, op: 'gt', right: 5 },
      next: { true: after, false: after },
    })
  }
  nodes.push({ id: 'done', type: 'end', name: 'Done', body: { ok: true } })
  return { name: 'Big Flow', description: `A flow of ${NODES} nodes for the editor's load benchmark.`, nodes }
}

const marks = []

async function timedLoad(browser, url, ready) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } })
  const page = await context.newPage()
  const started = performance.now()
  await page.goto(url)
  await page.waitForFunction(ready, NODES, { timeout: 30_000, polling: 'raf' })
  const ms = performance.now() - started
  // Where the editor's time went (marks set by editor/src/main.tsx and app.tsx), for the log.
  marks.push(
    await page.evaluate(() => {
      const at = (name) => Math.round(performance.getEntriesByName(name)[0]?.startTime ?? NaN)
      return {
        html: Math.round(performance.getEntriesByType('navigation')[0].responseEnd),
        start: at('editor-start'),
        data: at('editor-data'),
        rendered: at('editor-rendered'),
      }
    }),
  )
  await context.close()
  return ms
}

export async function run({ log = console.log } = {}) {
  log(`[editor-load] loading the editor for a ${NODES}-node flow in Chromium`)
  const chromiumPath = [process.env.FLOWCTL_TEST_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p))
  if (!chromiumPath) {
    log('  skipped: no Chromium (apt-get install chromium, or set FLOWCTL_TEST_CHROMIUM)')
    return { title: 'Editor load', rows: [], notes: ['skipped: no Chromium'] }
  }
  requireFlowctl()
  const dir = writeProject(join(TMP, 'editor-load'), { flows: [{ file: 'big-flow.yaml', flow: bigFlow() }] })
  const server = await startFlowctl(dir, { extraArgs: ['--no-watch'] })
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
  try {
    const editorUrl = `${server.url}/edit/bench/big-flow`
    const pageUrl = `${server.url}/flows/bench/big-flow`
    const editorReady = (n) => document.querySelectorAll('.react-flow__node .fc-node').length === n
    const pageReady = () => document.querySelector('.graph-wrap svg') !== null
    // One warm-up of each (the server's first layout, the browser's process start).
    await timedLoad(browser, editorUrl, editorReady)
    await timedLoad(browser, pageUrl, pageReady)
    const editor = []
    const flowPage = []
    for (let i = 0; i < RUNS; i++) {
      editor.push(await timedLoad(browser, editorUrl, editorReady))
      flowPage.push(await timedLoad(browser, pageUrl, pageReady))
    }
    const e = median(editor)
    const b = median(flowPage)
    log(`  editor canvas (${NODES} nodes drawn): median ${fmtMs(e)} (runs: ${editor.map((ms) => ms.toFixed(0)).join(', ')} ms)`)
    const editorMarks = marks.filter((m) => !Number.isNaN(m.start))
    const mid = (key) => median(editorMarks.map((m) => m[key]))
    log(
      `  editor, median ms after navigation: page received ${mid('html')}, bundle running ${mid('start')}, kinds + flow read ${mid('data')}, React rendered ${mid('rendered')}`,
    )
    log(`  flow page (baseline, graph drawn):  median ${fmtMs(b)} (runs: ${flowPage.map((ms) => ms.toFixed(0)).join(', ')} ms)`)
    log(
      `  load average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' / ')} on ${cpus().length} cores`,
    )
    log(`  ratio ${fmtRatio(e / b)}; target: canvas within ${TARGET_MS} ms: ${e <= TARGET_MS ? 'met' : 'NOT met'}`)
    return {
      title: 'Editor load',
      rows: [
        row(`editor canvas, ${NODES}-node flow (median of ${RUNS})`, fmtMs(e), `flow page ${fmtMs(b)}`, fmtRatio(e / b), `≤ ${TARGET_MS} ms`, e <= TARGET_MS),
      ],
      notes: [],
    }
  } finally {
    await browser.close()
    server.child.kill('SIGTERM')
  }
}

await runIfMain(import.meta.url, 'editor-load', run)
