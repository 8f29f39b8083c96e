// On demand, not part of run-all: `node bench/ab-cli.js TREE_A TREE_B` compares the start-up of short
// flowctl commands (--version, validate, export-openapi, test) between two built checkouts, run in
// alternation (ROUNDS=15) on the same project (fixtures/example of the first tree). It prints each
// command's median CPU (user + sys, from /usr/bin/time) and wall time per tree, and B/A ratios.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const [a, b] = process.argv.slice(2)
if (!a || !b) throw new Error('usage: node bench/ab-cli.js TREE_A TREE_B')
const project = join(a, 'fixtures', 'example')
const COMMANDS = {
  version: ['--version'],
  validate: ['validate', '--project', project],
  'export-openapi': ['export-openapi', '--project', project],
  test: ['test', '--project', project],
}
const rounds = Number(process.env.ROUNDS ?? 15)
const median = (list) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)]

function measure(tree, args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %U %S', process.execPath, join(tree, 'bin', 'flowctl.js'), ...args], { cwd: tree, encoding: 'utf8' })
  const [wall, user, sys] = result.stderr.trim().split('\n').at(-1).split(' ').map(Number)
  return { cpuMs: (user + sys) * 1000, wallMs: wall * 1000 }
}

for (const [name, args] of Object.entries(COMMANDS)) {
  const samples = { a: [], b: [] }
  for (let round = 0; round < rounds; round++) {
    // Alternate which tree goes first, so neither always runs on a warmer cache.
    const order = round % 2 === 0 ? ['a', 'b'] : ['b', 'a']
    for (const which of order) samples[which].push(measure(which === 'a' ? a : b, args))
  }
  const cpu = (which) => median(samples[which].map((s) => s.cpuMs))
  const wall = (which) => median(samples[which].map((s) => s.wallMs))
  console.log(
    `${name.padEnd(15)} A ${cpu('a').toFixed(0)} ms CPU / ${wall('a').toFixed(0)} ms wall   B ${cpu('b').toFixed(0)} ms CPU / ${wall('b').toFixed(0)} ms wall   B/A CPU ${(cpu('b') / cpu('a')).toFixed(2)}×, wall ${(wall('b') / wall('a')).toFixed(2)}×`,
  )
}
