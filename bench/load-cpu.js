// What a load costs whatever the flow files hold: the CPU time of `flowctl validate` on LOAD_FLOWS
// (default 10,000) order flows written six ways (plain; a validate warning in every flow; an error in
// every flow; comments on every line; flow style; anchors and aliases), against a plain script that
// reads and parses the same files with `yaml` (bench/lib/parse-baseline.js). CPU time (every thread,
// measured inside each process) is the steadier figure on a loaded machine. Alternating, ROUNDS
// (default 3) each, medians. Target ≤ 1.3× of read + parse for every way.
import { spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { BENCH_DIR, FLOWCTL, TMP } from './lib/paths.js'
import { flowFile, flowName, orderFlow, orderFlowWithWarning, withAnchors, writeProject } from './lib/project.js'
import { median } from './lib/load.js'
import { fmtMs, fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const FLOWS = Number(process.env.LOAD_FLOWS ?? 10000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const TARGET = 1.3

/** The order flow with an unknown setting on its If node: an error, so the flow is left out. */
function withError(name) {
  const flow = orderFlow(name)
  flow.nodes[1].colour = 'red'
  return flow
}

/** Each way: a name and the text of flow i. */
const WAYS = [
  ['plain', (i) => stringify(orderFlow(flowName(i)))],
  ['a validate warning in every flow', (i) => stringify(orderFlowWithWarning(flowName(i)))],
  ['an error in every flow', (i) => stringify(withError(flowName(i)))],
  ['a comment on every line', (i) => withComments(stringify(orderFlow(flowName(i))))],
  ['flow style (each node one JSON line)', (i) => flowStyle(orderFlow(flowName(i)))],
  ['anchors and aliases', (i) => withAnchors(stringify(orderFlow(flowName(i))))],
]

function withComments(text) {
  return text
    .split('\n')
    .map((line, n) => (line.trim() === '' ? line : n % 2 ? `${line} # why this line is here` : `# the next line\n${line}`))
    .join('\n')
}

function flowStyle(flow) {
  const { nodes, ...top } = flow
  return `${stringify(top)}nodes:\n${nodes.map((node) => `  - ${JSON.stringify(node)}\n`).join('')}`
}

function writeWay(dir, textOf) {
  writeProject(dir, { flows: [] })
  for (let i = 0; i < FLOWS; i++) writeFileSync(join(dir, 'flows', flowFile(i)), textOf(i))
  return dir
}

function cpuOf(result, what) {
  const cpu = /cpu-ms (\d+(?:\.\d+)?)/.exec(result.stderr)?.[1]
  if (cpu === undefined) throw new Error(`${what} exited ${result.status}: ${result.stderr.slice(0, 300)}`)
  return Number(cpu)
}

function validateCpu(dir) {
  const preload = join(BENCH_DIR, 'lib', 'print-cpu.cjs')
  const result = spawnSync(process.execPath, ['--require', preload, FLOWCTL, 'validate', '--project', dir], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  if (!/flows? checked/.test(result.stdout)) throw new Error(`validate printed no summary: ${result.stderr.slice(0, 300)}`)
  return cpuOf(result, 'validate')
}

function parseCpu(dir) {
  const preload = join(BENCH_DIR, 'lib', 'print-cpu.cjs')
  const result = spawnSync(process.execPath, ['--require', preload, join(BENCH_DIR, 'lib', 'parse-baseline.js'), join(dir, 'flows')], { encoding: 'utf8' })
  if (Number(result.stdout.split(' ')[0]) !== FLOWS * 4) throw new Error(`parse baseline read ${result.stdout}: ${result.stderr.slice(0, 300)}`)
  return cpuOf(result, 'parse baseline')
}

export async function run({ log = console.log } = {}) {
  const count = FLOWS.toLocaleString('en')
  log(`[load-cpu] flowctl validate on ${count} flows written six ways, against read + parse with yaml`)
  const rows = []
  const notes = []
  requireFlowctl()
  const dir = join(TMP, 'load-cpu')
  try {
    for (const [way, textOf] of WAYS) {
      writeWay(dir, textOf)
      parseCpu(dir) // warm the file system cache
      const validate = []
      const parse = []
      for (let r = 0; r < ROUNDS; r++) {
        parse.push(parseCpu(dir))
        validate.push(validateCpu(dir))
      }
      const v = median(validate)
      const p = median(parse)
      log(`  ${way}: validate ${validate.map(fmtMs).join(' / ')}; read + parse ${parse.map(fmtMs).join(' / ')}`)
      rows.push(
        row(
          `flowctl validate CPU, ${count} flows, ${way} (baseline: read + parse with yaml)`,
          fmtMs(v),
          fmtMs(p),
          fmtRatio(v / p),
          `≤ ${TARGET}×`,
          v / p <= TARGET,
        ),
      )
    }
  } catch (error) {
    log(`  failed: ${error.message}`)
    notes.push(`failed: ${error.message.split('\n')[0]}`)
    rows.push(row(`flowctl validate CPU, ${count} flows`, 'failed', '—', '—', `≤ ${TARGET}×`, false))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return { name: 'load-cpu', rows, notes }
}

await runIfMain(import.meta.url, 'load-cpu', run)
