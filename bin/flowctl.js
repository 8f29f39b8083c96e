#!/usr/bin/env node
// Tiny launcher. `--version` is answered here, before any module loads, so it starts as fast as node.
import { readFileSync } from 'node:fs'

const argv = process.argv.slice(2)
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(pkg.version + '\n')
} else {
  const { main } = await import('../dist/cli/main.js')
  process.exitCode = await main(argv)
}
