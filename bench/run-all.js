// Runs every benchmark in order and writes bench/results.md. `BENCH_DURATION` sets the seconds of
// each autocannon run (default 5). Every child process is killed at the end, even on failure.
import { stopAll } from './lib/proc.js'
import { writeResults } from './lib/results.js'
import { run as runApi } from './run-api.js'
import { run as peerNodeRed } from './peer-node-red.js'
import { run as startup } from './startup.js'
import { run as startupLarge } from './startup-large.js'
import { run as tickScale } from './tick-scale.js'
import { run as cronLibs } from './cron-libs.js'
import { run as reload } from './reload.js'
import { run as memory } from './memory.js'
import { run as storeThroughput } from './store-throughput.js'
import { run as documents } from './documents.js'
import { run as expressions } from './expressions.js'
import { run as flowTests } from './flow-tests.js'
import { run as historyKeep } from './history-keep.js'
import { run as clusterLimit } from './cluster-limit.js'
import { run as hostile } from './hostile.js'
import { run as hostileCorpus } from './hostile-corpus.js'
import { run as eachToEnd } from './each-to-end.js'
import { run as expressionTier } from './expression-tier.js'
import { run as asyncRuns } from './async-runs.js'

const benchmarks = [
  ['run-api', runApi],
  ['peer-node-red', peerNodeRed],
  ['startup', startup],
  ['startup-large', startupLarge],
  ['tick-scale', tickScale],
  ['cron-libs', cronLibs],
  ['reload', reload],
  ['memory', memory],
  ['store-throughput', storeThroughput],
  ['documents', documents],
  ['expressions', expressions],
  ['flow-tests', flowTests],
  ['history-keep', historyKeep],
  ['cluster-limit', clusterLimit],
  ['hostile', hostile],
  ['hostile-corpus', hostileCorpus],
  ['each-to-end', eachToEnd],
  ['expression-tier', expressionTier],
  ['async-runs', asyncRuns],
]

const sections = []
const started = performance.now()
try {
  for (const [name, run] of benchmarks) {
    try {
      sections.push(await run())
    } catch (error) {
      console.error(`[${name}] crashed:`, error)
      sections.push({
        name,
        rows: [{ benchmark: name, flowctl: 'crashed', baseline: '—', ratio: '—', target: '—', met: false }],
        notes: [String(error.message ?? error).split('\n')[0]],
      })
    } finally {
      await stopAll()
    }
  }
  sections.push({ name: 'run-all', rows: [], notes: [`total time ${((performance.now() - started) / 1000).toFixed(0)} s`] })
  writeResults(sections)
  // A missed target is a finding, reported in the table; only a benchmark that could not run fails the script.
  if (sections.some((s) => s.rows.some((r) => r.flowctl === 'failed' || r.flowctl === 'crashed'))) process.exitCode = 1
} finally {
  await stopAll()
}
