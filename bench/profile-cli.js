// On demand, not part of run-all: `node bench/profile-cli.js <flowctl args...>` runs one flowctl
// command under `node --cpu-prof` and prints where its time went (self time by function and file).
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { FLOWCTL, ROOT, TMP } from './lib/paths.js'
import { topSelfTime } from './lib/cpuprofile.js'

const dir = join(TMP, 'prof-cli')
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
const started = performance.now()
const result = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, FLOWCTL, ...process.argv.slice(2)], { cwd: ROOT, encoding: 'utf8' })
console.log(`exit ${result.status} after ${(performance.now() - started).toFixed(0)} ms (with profiling overhead)`)
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
const top = topSelfTime(join(dir, file), { root: ROOT + '/' })
const show = (list, n) =>
  list.slice(0, n).forEach((f) => console.log(`  ${f.pct.toFixed(1).padStart(5)}%  ${f.ms.toFixed(0).padStart(6)} ms  ${f.name ?? ''} ${f.where ?? f.file}`))
console.log(`\nself time, total ${top.totalMs.toFixed(0)} ms; top functions:`)
show(top.functions, 25)
console.log('\nby package / folder:')
show(top.groups, 15)
console.log('\nby file:')
show(top.files, 25)
