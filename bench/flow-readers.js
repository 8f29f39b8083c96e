// The flow file reader in-process (npm run build first): CPU per flow file of checking 3,000 order
// flows (clean, with a validate warning each, with an anchor and an alias each) with js-yaml's
// reading and positions from its events (src/project/plain-yaml.ts, what flowctl does) against the same check from yaml's Document (the
// reference, what flowctl does for files js-yaml could read differently), and plain `yaml.parse` of
// the same texts. Warm: 5 rounds each, alternating, the lowest. Start-up decides this mechanism, so
// the figure is CPU, not instructions per request.
import { join } from 'node:path'
import { parse, stringify } from 'yaml'
import { ROOT } from './lib/paths.js'
import { flowName, orderFlow, orderFlowWithWarning, withAnchors } from './lib/project.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'

const FILES = Number(process.env.FILES ?? 3000)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const fmtUs = (us) => `${us.toFixed(0)} µs`

function cpuUsPerFile(task) {
  const before = process.cpuUsage()
  task()
  const { user, system } = process.cpuUsage(before)
  return (user + system) / FILES
}

export async function run({ log = console.log } = {}) {
  log(`[flow-readers] CPU per flow file, ${FILES} files, js-yaml + events against yaml's Document`)
  requireFlowctl()
  const { checkSource } = await import(join(ROOT, 'dist', 'project', 'flow-file.js'))
  const { readPlainYaml } = await import(join(ROOT, 'dist', 'project', 'plain-yaml.js'))
  const { parseYamlSource } = await import(join(ROOT, 'dist', 'project', 'yaml-source.js'))
  const context = { timezone: 'UTC', secrets: new Map([['BENCH_TOKEN', 'x']]), secretsFile: '.env' }
  const rows = []
  for (const [label, textOf] of [
    ['clean order flows', (i) => stringify(orderFlow(flowName(i)))],
    ['order flows with a validate warning each', (i) => stringify(orderFlowWithWarning(flowName(i)))],
    ['order flows with an anchor and an alias each', (i) => withAnchors(stringify(orderFlow(flowName(i))))],
  ]) {
    const texts = Array.from({ length: FILES }, (_, i) => textOf(i))
    const checkWith = (read) => () => texts.forEach((text, i) => checkSource(`flows/f${i}.yaml`, text, read(text), context).collector.source?.dropParsed())
    const tasks = {
      fast: checkWith((text) => readPlainYaml(text) ?? parseYamlSource(text)),
      reference: checkWith((text) => parseYamlSource(text)),
      parse: () => texts.forEach((text) => parse(text)),
    }
    const best = { fast: Infinity, reference: Infinity, parse: Infinity }
    for (let r = 0; r < ROUNDS; r++) for (const [name, task] of Object.entries(tasks)) best[name] = Math.min(best[name], cpuUsPerFile(task))
    log(`  ${label}: js-yaml ${fmtUs(best.fast)}, yaml's Document ${fmtUs(best.reference)}, yaml.parse alone ${fmtUs(best.parse)} per file`)
    rows.push(
      row(
        `check a flow file, ${label}: js-yaml and its events (baseline: yaml's Document)`,
        fmtUs(best.fast),
        fmtUs(best.reference),
        fmtRatio(best.fast / best.reference),
        '—',
        null,
      ),
    )
    rows.push(
      row(
        `check a flow file, ${label}: js-yaml and its events (baseline: yaml.parse alone)`,
        fmtUs(best.fast),
        fmtUs(best.parse),
        fmtRatio(best.fast / best.parse),
        '—',
        null,
      ),
    )
  }
  return { name: 'flow-readers', rows, notes: [] }
}

await runIfMain(import.meta.url, 'flow-readers', run)
