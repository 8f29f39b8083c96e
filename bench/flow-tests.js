// 8. `flowctl test` on fixtures/example (every case of its tests/) against `flowctl validate` on the
// same project, and what it costs beyond Node's own start-up (`node -e 0`). 10 runs each, alternating,
// median wall time. Target (issue 17): well under a second beyond Node's start-up.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { FLOWCTL, ROOT } from './lib/paths.js'
import { median } from './lib/load.js'
import { fmtMs, fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const RUNS = 10
const PROJECT = join(ROOT, 'fixtures', 'example')

function timed(args, okCodes = [0]) {
  const started = performance.now()
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
  const ms = performance.now() - started
  if (!okCodes.includes(result.status)) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${(result.stderr || result.stdout).slice(0, 500)}`)
  return { ms, stdout: result.stdout }
}

export async function run({ log = console.log } = {}) {
  log('[flow-tests] flowctl test on fixtures/example')
  const rows = []
  const notes = []
  const commands = [
    { name: 'node -e 0', args: ['-e', '0'] },
    { name: 'flowctl validate', args: [FLOWCTL, 'validate', '--project', PROJECT] },
    { name: 'flowctl test', args: [FLOWCTL, 'test', '--project', PROJECT] },
  ]
  try {
    requireFlowctl()
    const first = commands.map((c) => timed(c.args)) // warms the file system cache
    const cases = /^(\d+) passed, 0 failed/m.exec(first[2].stdout)?.[1]
    if (!cases) throw new Error(`flowctl test did not pass every case:\n${first[2].stdout.slice(-500)}`)
    const times = commands.map(() => [])
    for (let i = 0; i < RUNS; i++) for (const [k, c] of commands.entries()) times[k].push(timed(c.args).ms)
    const [node, validate, test] = times.map(median)
    const ratio = test / validate
    const beyondNode = test - node
    // The spread says how much other load on the machine moved the medians.
    const spread = (k) => `${fmtMs(Math.min(...times[k]))}–${fmtMs(Math.max(...times[k]))}`
    log(
      `  node -e 0 ${fmtMs(node)}, validate ${fmtMs(validate)}, test (${cases} cases) ${fmtMs(test)}: ${fmtRatio(ratio)} of validate, ${fmtMs(beyondNode)} beyond node`,
    )
    log(`  spread (min–max of ${RUNS}): node -e 0 ${spread(0)}, validate ${spread(1)}, test ${spread(2)}`)
    notes.push(
      `flowctl validate ${fmtMs(validate)} (absolute, the ratio's baseline), node -e 0 ${fmtMs(node)}; min–max of ${RUNS} runs: node ${spread(0)}, validate ${spread(1)}, test ${spread(2)}`,
    )
    rows.push(
      row(
        `flowctl test, ${cases} cases of fixtures/example (median of ${RUNS}; baseline flowctl validate on it)`,
        fmtMs(test),
        fmtMs(validate),
        fmtRatio(ratio),
        '≤ 3×',
        ratio <= 3,
      ),
    )
    rows.push(
      row(
        `flowctl test beyond Node's start-up (baseline node -e 0)`,
        fmtMs(beyondNode),
        fmtMs(node),
        fmtRatio(test / node),
        '≤ 500 ms beyond',
        beyondNode <= 500,
      ),
    )
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row('flowctl test', 'failed', '—', '—', '≤ 3× / ≤ 500 ms beyond', false))
  }
  return { name: 'flow-tests', rows, notes }
}

await runIfMain(import.meta.url, 'flow-tests', run)
