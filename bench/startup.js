// 3. Start-up time: `flowctl --version` and `flowctl export-openapi --project fixtures/example`
// against `node -e 0`, 20 runs each, alternating, median wall time.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { FLOWCTL, ROOT } from './lib/paths.js'
import { median } from './lib/load.js'
import { fmtMs, fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const RUNS = 20

function timed(args) {
  const started = performance.now()
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
  const ms = performance.now() - started
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${(result.stderr || result.stdout).slice(0, 500)}`)
  return ms
}

export async function run({ log = console.log } = {}) {
  log('[startup] process start-up times')
  const rows = []
  const notes = []
  const commands = [
    { name: 'node -e 0', args: ['-e', '0'] },
    { name: 'flowctl --version', args: [FLOWCTL, '--version'], target: 1.5 },
    { name: 'flowctl export-openapi --project fixtures/example', args: [FLOWCTL, 'export-openapi', '--project', join(ROOT, 'fixtures', 'example')], target: 3 },
  ]
  try {
    requireFlowctl()
    for (const c of commands) timed(c.args) // warm the file system cache
    const times = commands.map(() => [])
    for (let i = 0; i < RUNS; i++) for (const [k, c] of commands.entries()) times[k].push(timed(c.args))
    const base = median(times[0])
    log(`  node -e 0: median ${fmtMs(base)}`)
    for (const [k, c] of commands.entries()) {
      if (!c.target) continue
      const m = median(times[k])
      const ratio = m / base
      log(`  ${c.name}: median ${fmtMs(m)} (${fmtRatio(ratio)})`)
      rows.push(row(`${c.name} (median of ${RUNS}; baseline node -e 0)`, fmtMs(m), fmtMs(base), fmtRatio(ratio), `≤ ${c.target}×`, ratio <= c.target))
    }
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row('start-up', 'failed', '—', '—', '≤ 1.5× / ≤ 3×', false))
  }
  return { name: 'startup', rows, notes }
}

await runIfMain(import.meta.url, 'startup', run)
