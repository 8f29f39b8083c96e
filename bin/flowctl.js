#!/usr/bin/env node
// Tiny launcher. `--version` is answered here, before any module loads, so it starts as fast as node.
// Everything else runs the bundled CLI (dist/bin/, written by scripts/bundle-cli.mjs).
import { readFileSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'

const argv = process.argv.slice(2)
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(pkg.version + '\n')
} else {
  // Every command but `serve` lives well under a second. Node waits at exit for V8's background
  // optimising compiles (of the YAML parser, mostly), ~15 ms such a command never profits from.
  if (!argv.includes('serve')) setFlagsFromString('--no-opt')
  const { main } = await import('../dist/bin/main.js')
  process.exitCode = await main(argv)
}
