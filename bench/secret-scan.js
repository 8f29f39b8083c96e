// The secret scan of JSON text before it is stored (npm run build first): `jsonHoldsSecret` of
// src/language/secret-masking.ts (native scan of long texts, base64 pre-check of long words) against
// the plain scan it replaced (bench/lib/secret-scan-reference.js), in the same process, on a hostile
// 1 MB body `{"ms":"zzz…"}` and on a typical small run output, with a 28-character secret; and the
// 1 MB body with a 3-character secret (too short for the pre-check: its words are still decoded).
// CPU per call, the lowest of ROUNDS alternating rounds.
import { join } from 'node:path'
import { ROOT } from './lib/paths.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'
import { requireFlowctl } from './lib/flowctl-check.js'
import { referenceJsonHoldsSecret, referenceMasker } from './lib/secret-scan-reference.js'

const ROUNDS = Number(process.env.ROUNDS ?? 7)
const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(2)} µs`)

function cpuUsPerCall(task, calls) {
  const before = process.cpuUsage()
  for (let i = 0; i < calls; i++) task()
  const { user, system } = process.cpuUsage(before)
  return (user + system) / calls
}

export async function run({ log = console.log } = {}) {
  log('[secret-scan] CPU per jsonHoldsSecret call, flowctl against the plain scan')
  requireFlowctl()
  const { formsOf, jsonHoldsSecret } = await import(join(ROOT, 'dist', 'language', 'secret-masking.js'))
  const hostile = JSON.stringify({ ms: 'z'.repeat(1_000_000) })
  const small = JSON.stringify({
    orderId: 'ord_8f3k2m9x',
    status: 'accepted',
    total: 129.95,
    currency: 'EUR',
    items: [{ sku: 'A-100', qty: 3 }],
    note: 'leave at the door\nthanks',
    createdAt: '2026-11-27T18:40:12.345Z',
    runId: 'run_01JD9X',
  })
  const cases = [
    ['1 MB body {"ms":"zzz…"}, 28-character secret', hostile, 'sk_live_0123456789abcdefGHIJ', 20],
    [`run output of ${small.length} bytes, 28-character secret`, small, 'sk_live_0123456789abcdefGHIJ', 200_000],
    ['1 MB body {"ms":"zzz…"}, 3-character secret', hostile, 'k9z', 20],
  ]
  const rows = []
  for (const [label, json, secret, calls] of cases) {
    const secrets = new Map([['BENCH_SECRET', secret]])
    const masker = referenceMasker(secrets, formsOf)
    if (jsonHoldsSecret(json, secrets) !== referenceJsonHoldsSecret(json, masker)) throw new Error(`different answers: ${label}`)
    const tasks = { flowctl: () => jsonHoldsSecret(json, secrets), reference: () => referenceJsonHoldsSecret(json, masker) }
    const best = { flowctl: Infinity, reference: Infinity }
    for (let r = 0; r < ROUNDS; r++) for (const [name, task] of Object.entries(tasks)) best[name] = Math.min(best[name], cpuUsPerCall(task, calls))
    log(`  ${label}: ${fmt(best.flowctl)} against ${fmt(best.reference)} (${fmtRatio(best.flowctl / best.reference)})`)
    rows.push(
      row(`jsonHoldsSecret, ${label} (baseline: the plain scan)`, fmt(best.flowctl), fmt(best.reference), fmtRatio(best.flowctl / best.reference), '—', null),
    )
  }
  return { name: 'secret-scan', rows, notes: [] }
}

await runIfMain(import.meta.url, 'secret-scan', run)
