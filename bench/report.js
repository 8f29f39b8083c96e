// The side-by-side report, in one run: every row a flowctl figure beside a baseline measured in the
// same run, with the baseline's absolute figure.
//  - instructions per request of the order flow (history kept) against raw h3 (callgrind; ≤ 2.5×)
//  - req/s and server CPU per request against raw h3, SQLite and PostgreSQL stores (run-api.js)
//  - the same order flow on Node-RED (peer-node-red.js)
//  - serve start-up with 10,000 flows, with a validate warning in every flow and without (≤ 1.3× of
//    reading and parsing the same files with yaml), and `validate`'s CPU on files written six ways
//  - RSS of serve with 1,000 flows after start-up (≤ 1.5× a plain h3 server after start-up)
// `node bench/report.js` (npm run build first); about half an hour on a quiet 2-core machine, most of
// it valgrind. Writes bench/.tmp/results-report.md. SKIP=instructions,peer-node-red leaves parts out.
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { stopAll } from './lib/proc.js'
import { row, writeResults } from './lib/results.js'
import { run as instructions } from './instructions.js'
import { run as runApi } from './run-api.js'
import { run as peerNodeRed } from './peer-node-red.js'
import { run as startupLarge } from './startup-large.js'
import { run as loadCpu } from './load-cpu.js'
import { run as memory } from './memory.js'

const SKIP = new Set((process.env.SKIP ?? '').split(',').filter(Boolean))

const parts = [
  ['instructions', () => instructions()],
  ['run-api', () => runApi()],
  ['peer-node-red', () => peerNodeRed()],
  ['startup-large', () => startupLarge({ warning: false })],
  ['startup-large-warning', () => startupLarge({ warning: true })],
  ['load-cpu', () => loadCpu()],
  ['memory', () => memory()],
]

const sections = []
const started = performance.now()
try {
  for (const [name, run] of parts) {
    if (SKIP.has(name)) continue
    try {
      sections.push(await run())
    } catch (error) {
      console.error(`[${name}] crashed:`, error)
      sections.push({ name, rows: [row(name, 'crashed', '—', '—', '—', false)], notes: [String(error.message ?? error).split('\n')[0]] })
    } finally {
      await stopAll()
    }
  }
  sections.push({ name: 'report', rows: [], notes: [`total time ${((performance.now() - started) / 1000).toFixed(0)} s`] })
  writeResults(sections, join(TMP, 'results-report.md'))
  if (sections.some((s) => s.rows.some((r) => r.flowctl === 'failed' || r.flowctl === 'crashed'))) process.exitCode = 1
} finally {
  await stopAll()
}
