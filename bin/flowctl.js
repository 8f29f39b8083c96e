#!/usr/bin/env node
// Tiny launcher. `--version` is answered here, before any module loads, so it starts as fast as node.
// Everything else runs the bundled CLI (dist/bin/, written by scripts/bundle-cli.mjs).
// Built-ins through process.getBuiltinModule, not `import`: an ES module facade of node:fs reads its
// lazy exports and so loads the streams stack (~15 ms); see scripts/bundle-cli.mjs.
const { readFileSync } = process.getBuiltinModule('node:fs')

const argv = process.argv.slice(2)
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(pkg.version + '\n')
} else {
  // Every command but `serve` lives well under a second. Node waits at exit for V8's background
  // optimising compiles (of the YAML parser, mostly), ~15 ms such a command never profits from.
  if (!argv.includes('serve')) process.getBuiltinModule('node:v8').setFlagsFromString('--no-opt')
  const { main } = await import('../dist/bin/main.js')
  process.exitCode = await main(argv)
}
