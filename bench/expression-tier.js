// What keeping small, simple expressions in the server's thread saves (src/language/expression-tier.ts):
// CPU per evaluation of `$sum(start.items.(price * qty))` over a two-item basket, in the server's
// thread against the same expression sent to an expression worker process (the server's CPU and the
// worker's, read from /proc). The worker path is the baseline: it is what every expression would
// cost without the tier. test/flow/expression.test.ts holds the two paths to the same answers.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './lib/paths.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'

const SOURCE = '$sum(start.items.(price * qty))'
const INPUT = {
  start: {
    items: [
      { sku: 'X', price: 2.5, qty: 3 },
      { sku: 'Y', price: 4, qty: 2 },
    ],
  },
  run: { id: 'r', startedAt: '2026-01-01T00:00:00Z', trigger: 'http' },
}
const N = Number(process.env.EXPRESSION_TIER_EVALUATIONS ?? 5000)

/** CPU ms of every process but this one that runs the expression worker (its children). */
function childrenCpuMs() {
  let total = 0
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').split(' ').filter(Boolean)
  for (const pid of children) total += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
  return total
}

async function cpuPerEvaluation(evaluate, compiled) {
  for (let i = 0; i < 500; i++) await evaluate(compiled, INPUT)
  const own = process.cpuUsage()
  const children = childrenCpuMs()
  for (let i = 0; i < N; i++) await evaluate(compiled, INPUT)
  const used = process.cpuUsage(own)
  const ownUs = (used.user + used.system) / N
  return { ownUs, workerUs: ((childrenCpuMs() - children) * 1000) / N }
}

export async function run() {
  const { compileExpression, evaluateExpression } = await import(join(ROOT, 'dist/language/expression.js'))
  const limits = { expressionMs: 50, textChars: 1_000_000, arrayItems: 100_000 }
  const inThread = compileExpression(SOURCE, limits)
  if (inThread.inline === false) throw new Error(`${SOURCE} is expected to run in the server's thread`)
  const inWorker = compileExpression(SOURCE, limits)
  inWorker.fast = null
  inWorker.inline = false
  const worker = await cpuPerEvaluation(evaluateExpression, inWorker)
  const thread = await cpuPerEvaluation(evaluateExpression, inThread)
  const workerTotal = worker.ownUs + worker.workerUs
  return {
    name: 'expression tier',
    rows: [
      row(
        `${SOURCE}: CPU per evaluation, server's thread vs a worker process`,
        `${thread.ownUs.toFixed(1)} µs`,
        `${workerTotal.toFixed(1)} µs (server ${worker.ownUs.toFixed(1)} + worker ${worker.workerUs.toFixed(1)})`,
        fmtRatio(thread.ownUs / workerTotal),
        'info',
        null,
      ),
    ],
    notes: [`${N} evaluations each, one at a time`],
  }
}

await runIfMain(import.meta.url, 'expression-tier', run)
