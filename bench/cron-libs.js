// Cron libraries compared for SPEC §16 (why flowctl schedules run on croner): the cost of finding the
// next run, for croner (what flowctl uses) and cron-parser (what it used before), on the same
// expressions and zones in the same run, plus flowctl's own `nextCronRun` (croner behind the dialect
// checks). Run after `npm run build`: node bench/cron-libs.js
import { createRequire } from 'node:module'
import { Cron } from 'croner'
import { fmtRatio, row, runIfMain } from './lib/results.js'

const require = createRequire(import.meta.url)
const { CronExpressionParser } = require('cron-parser')

const CASES = [
  ['*/15 * * * *', 'UTC'],
  ['0 3 * * *', 'Europe/Berlin'],
  ['30 2 * * *', 'America/New_York'],
  ['0 9 * * 1-5', 'Asia/Kolkata'],
  ['0 0 L * *', 'Europe/Berlin'],
]
const STEPS = 2000

/** Microseconds per next-run step, walking STEPS runs from 2026-01-01 for each case. */
function perStep(next) {
  const started = performance.now()
  let steps = 0
  for (const [expr, tz] of CASES) {
    let at = new Date('2026-01-01T00:00:00Z')
    for (let i = 0; i < STEPS; i++) {
      at = next(expr, tz, at)
      steps++
    }
  }
  return ((performance.now() - started) * 1000) / steps
}

export async function run({ log = console.log } = {}) {
  log('[cron-libs] next-run cost, croner against cron-parser')
  const { nextCronRun } = await import('../dist/language/cron.js')
  const croners = new Map()
  const croner = (expr, tz, at) => {
    const key = `${expr} ${tz}`
    if (!croners.has(key)) croners.set(key, new Cron(expr, { timezone: tz, mode: '5-part', paused: true, fixedTimeRule: 'no-wildcard' }))
    return croners.get(key).nextRun(at)
  }
  const parsers = new Map()
  const parser = (expr, tz, at) => {
    const key = `${expr} ${tz}`
    if (!parsers.has(key)) parsers.set(key, CronExpressionParser.parse(expr, { tz }))
    const expression = parsers.get(key)
    expression.reset(at)
    return expression.next().toDate()
  }
  perStep(croner) // warm up both
  perStep(parser)
  const c = perStep(croner)
  const p = perStep(parser)
  const f = perStep((expr, tz, at) => nextCronRun(expr, tz, at))
  log(`  croner ${c.toFixed(1)} µs, cron-parser ${p.toFixed(1)} µs, flowctl nextCronRun ${f.toFixed(1)} µs per next run`)
  const rows = [
    row('Next cron run, croner (baseline: cron-parser, same expressions)', `${c.toFixed(1)} µs`, `${p.toFixed(1)} µs`, fmtRatio(c / p), '—', null),
    row('Next cron run, flowctl nextCronRun (baseline: cron-parser)', `${f.toFixed(1)} µs`, `${p.toFixed(1)} µs`, fmtRatio(f / p), '—', null),
  ]
  return { name: 'cron-libs', rows, notes: [] }
}

await runIfMain(import.meta.url, 'cron-libs', run)
