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
  const v8 = process.getBuiltinModule('node:v8')
  // Every command but `serve` lives well under a second. Node waits at exit for V8's background
  // optimising compiles (of the YAML parser, mostly), ~15 ms such a command never profits from.
  // `serve` loads its projects without them too and turns the compiler on once it listens
  // (src/cli/serve.ts): the loader's optimised code and the compiler threads' memory would stay
  // for the life of the server, ~5 MB of RSS with 1,000 flows. src/project/long-load.ts turns it on
  // during a long load.
  v8.setFlagsFromString('--no-opt')
  // serve: V8's young generation keeps its first size (two 1 MB semi-spaces) while the projects
  // load (src/cli/serve.ts lets it grow again once they have). A load allocates mostly data that
  // survives, so V8 doubled it up to 2 × 16 MB, and a young generation never shrinks: ~20 MB of RSS
  // for the life of the process with 1,000 flows, for no measured gain in load time (bench/results.md,
  // stop 25). V8 reads this flag each time it would grow the space, so it works set here;
  // --max-semi-space-size is read only when the heap is made.
  if (argv.includes('serve') && !process.env.NOGF) v8.setFlagsFromString('--semi-space-growth-factor=1')
  const { main } = await import('../dist/bin/main.js')
  process.exitCode = await main(argv)
}
