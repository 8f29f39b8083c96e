// Expressions (SPEC §9): an expression-heavy flow against the same flow written with plain
// references, both served by one `flowctl serve`, alternated under the same load. Target: the
// expression flow within 1.5× of the plain one (its req/s at least 0.67× of the plain flow's).
import { join } from 'node:path'
import { TMP } from './lib/paths.js'
import { writeProject } from './lib/project.js'
import { startFlowctl } from './lib/servers.js'
import { httpRequest, stopChild } from './lib/proc.js'
import { alternate, ORDER_BODIES } from './lib/load.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { newestRun, requireFlowctl } from './lib/flowctl-check.js'

const START = {
  id: 'start',
  type: 'start',
  name: 'Start',
  method: 'post',
  inputs: { body: { type: 'object', required: ['sku', 'qty'], properties: { sku: { type: 'string' }, qty: { type: 'integer' } } } },
  next: 'compute',
}

/** The same flow twice: Start → set (5 values) → If → End (3 fields); `write` gives each setting. */
function pricingFlow(name, write) {
  return {
    name,
    nodes: [
      START,
      {
        id: 'compute',
        type: 'set',
        name: 'Compute',
        values: {
          total: write.total,
          label: write.label,
          big: write.big,
          code: write.code,
          qty: write.qty,
        },
        next: 'check',
      },
      { id: 'check', type: 'if', name: 'Check', condition: { left: write.condition, op: 'eq', right: true }, next: { true: 'done', false: 'done' } },
      { id: 'done', type: 'end', name: 'Done', status: 200, body: { total: write.bodyTotal, label: write.bodyLabel, big: '{{check.result}}' } },
    ],
  }
}

const plain = pricingFlow('Plain', {
  total: '{{start.qty}}',
  label: '{{start.sku}}-{{start.qty}}',
  big: '{{start.qty}}',
  code: '{{start.sku}}',
  qty: '{{start.qty}}',
  condition: '{{compute.big}}',
  bodyTotal: '{{compute.total}}',
  bodyLabel: '{{compute.label}}',
})

const expressions = pricingFlow('Expressions', {
  total: '{{= start.qty * 2.5 }}',
  label: '{{= start.sku & "-" & $string(start.qty) }}',
  big: '{{= start.qty > 10 }}',
  code: '{{= $uppercase(start.sku) }}',
  qty: '{{= $round(start.qty / 3, 2) }}',
  condition: '{{= compute.big and compute.qty > 1 }}',
  bodyTotal: '{{= compute.total }}',
  bodyLabel: '{{= compute.label & " (" & compute.code & ")" }}',
})

async function check(url) {
  const res = await httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ORDER_BODIES[1] })
  if (res.status !== 200) throw new Error(`expected 200 from ${url}, got ${res.status} ${res.body.slice(0, 300)}`)
}

export async function run({ log = console.log } = {}) {
  const rows = []
  const notes = []
  log('[expressions] expression-heavy flow against the same flow with plain references')
  requireFlowctl()
  const dir = writeProject(join(TMP, 'expressions'), {
    flows: [
      { file: 'plain.yaml', flow: plain },
      { file: 'expressions.yaml', flow: expressions },
    ],
  })
  const flowctl = await startFlowctl(dir)
  try {
    const plainUrl = `${flowctl.url}/api/run/bench/plain`
    const exprUrl = `${flowctl.url}/api/run/bench/expressions`
    await check(plainUrl)
    await check(exprUrl)
    const [base, expr] = await alternate(
      [
        { name: 'plain references', url: plainUrl, pid: flowctl.child.pid },
        { name: 'expressions', url: exprUrl, pid: flowctl.child.pid },
      ],
      { log },
    )
    const ratio = expr.rps / base.rps
    rows.push(
      row(
        'Expression-heavy flow (8 expressions) vs plain references (req/s, mean of 2)',
        expr.rps.toFixed(0),
        base.rps.toFixed(0),
        fmtRatio(ratio),
        '≥ 0.67× (within 1.5×)',
        ratio >= 1 / 1.5,
      ),
    )
    rows.push(
      row(
        'Expression-heavy flow, server CPU per request',
        `${expr.cpuUs.toFixed(0)} µs`,
        `${base.cpuUs.toFixed(0)} µs`,
        fmtRatio(expr.cpuUs / base.cpuUs),
        '≤ 1.50×',
        expr.cpuUs / base.cpuUs <= 1.5,
      ),
    )
    const bad = expr.non2xx + expr.errors + base.non2xx + base.errors
    rows.push(row('Expression bench non-2xx + socket errors', String(expr.non2xx + expr.errors), String(base.non2xx + base.errors), '—', '0', bad === 0))
    if (bad) notes.push(`statuses: expressions ${JSON.stringify(expr.statuses)}, plain ${JSON.stringify(base.statuses)}`)
  } finally {
    await stopChild(flowctl.child)
  }
  // Read after the server stopped: the last load was on the expression flow, and its runs must be committed.
  const newest = newestRun(dir)
  const ok = newest !== null && newest.flow === 'expressions' && newest.status === 'success'
  rows.push(
    row(
      'Expression bench: history recorded under load',
      newest ? `${newest.flow} ${newest.status} ${newest.httpStatus}` : 'no record',
      '—',
      '—',
      'newest record present',
      ok,
    ),
  )
  return { name: 'expressions', rows, notes }
}

await runIfMain(import.meta.url, 'expressions', run)
