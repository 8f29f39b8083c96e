// Last step of `npm run build`: bundles the CLI (dist/cli/main.js and everything it imports) into
// dist/bin/, which bin/flowctl.js loads. Resolving and reading ~100 small ES modules plus yaml's and
// commander's CommonJS files cost ~30 ms of every command; a few chunks cost a fraction of that.
// Lazy imports stay lazy (each becomes its own chunk). dist/bin/ sits at the same depth as dist/cli/,
// so `new URL('../../package.json', import.meta.url)` and the templates path resolve the same.
//
// The packages on the CLI's start-up path and on `serve`'s are inlined; the rest stay ordinary
// imports from node_modules: native code (better-sqlite3), optional requires (pg), packages that read
// their own files (swagger-ui-dist) and packages only some commands or requests load.
import { readFileSync, rmSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { fileURLToPath } from 'node:url'
import { build } from 'rolldown'

// ajv and ajv-formats: what `flowctl test` and `run` validate inputs with (the engine's chunk only; the
// loader compiles with ajv from node_modules, rarely); ~90 CommonJS files cost ~10 ms more to load.
// js-yaml, h3 (with rou3 and srvx), croner, chokidar, diff, dagre and leven: what `serve` loads at
// start-up. Inlined, their source texts are ASCII (see asciiOnly) and a few chunks instead of ~40
// modules: ~2 MB less RSS for the life of the server (docs/performance.md).
const INLINED = new Set([
  'commander',
  'chalk',
  'yaml',
  'ora',
  'ajv',
  'ajv-formats',
  'listhen',
  'js-yaml',
  'h3',
  'croner',
  'chokidar',
  'diff',
  '@dagrejs/dagre',
  'leven',
])
// listhen's imports that serve never uses become proxies that require the package on first use:
// node-forge (~1.7 MB of heap once evaluated) makes https certificates, which serve never asks for;
// consola (and its Intl.Segmenter, which maps ~1 MB of ICU data) logs listhen's warnings and
// printed URLs, which serve turns off. Each entry: the names listhen imports, and whether each is an
// object or a function. Its optional imports (tunnels, websockets, clipboard, its own CLI's) stay
// imports serve never makes.
const LAZY = {
  'node-forge': { default: 'object' },
  consola: { default: 'object', consola: 'object' },
  'consola/utils': { colors: 'object', getColor: 'function' },
}
const LAZY_PREFIX = '\0flowctl-lazy:'
const LISTHEN_OPTIONAL = new Set(['crossws', 'untun', 'tinyclip', 'jiti', '@parcel/watcher', '@parcel/watcher-wasm'])
const lazyPackages = {
  name: 'lazy-packages',
  resolveId: (id) => (Object.hasOwn(LAZY, id) ? LAZY_PREFIX + id : null),
  load: (id) => {
    if (!id.startsWith(LAZY_PREFIX)) return null
    const name = id.slice(LAZY_PREFIX.length)
    const lines = [
      'import { createRequire } from "node:module";',
      'let loaded;',
      // Resolved from listhen's own folder, where its dependency is whatever the package manager did.
      `const load = () => (loaded ??= createRequire(createRequire(import.meta.url).resolve("listhen"))(${JSON.stringify(name)}));`,
    ]
    for (const [exported, kind] of Object.entries(LAZY[name])) {
      // CommonJS: `default` is the module itself (node-forge's object), a named export one of its keys.
      const value = exported === 'default' && name === 'node-forge' ? 'load()' : `load()[${JSON.stringify(exported)}]`
      const proxy =
        kind === 'function'
          ? `(...args) => ${value}(...args)`
          : `new Proxy({}, { get: (_, key) => ${value}[key], set: (_, key, v) => ((${value}[key] = v), true), has: (_, key) => key in ${value} })`
      lines.push(exported === 'default' ? `export default ${proxy};` : `export const ${exported} = ${proxy};`)
    }
    return lines.join('\n')
  },
}
const outDir = fileURLToPath(new URL('../dist/bin/', import.meta.url))

/** `yaml/dist/x` → `yaml`, `@scope/name/x` → `@scope/name`; null for relative and absolute ids. */
function packageName(id) {
  if (id.startsWith('.') || id.startsWith('/') || id.startsWith('\0')) return null
  const parts = id.split('/')
  return id.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/**
 * `import { readFileSync } from "node:fs"` makes Node build an ES module facade of the built-in, which
 * reads every export once, lazy getters included: fs's loads the whole streams stack, process's and
 * crypto's others (measured ~15-25 ms of CPU each, paid by every command). `process.getBuiltinModule`
 * returns the same functions without a facade, so static imports of built-ins become that.
 */
const STATIC_BUILTIN_IMPORT = /^import\s+(?:([\w$]+|\*\s+as\s+[\w$]+|\{[^}]*\}|[\w$]+\s*,\s*\{[^}]*\})\s+from\s+)?"([^"]+)";$/gm

function withoutBuiltinFacades(code) {
  return code.replace(STATIC_BUILTIN_IMPORT, (statement, clause, id) => {
    if (!isBuiltin(id)) return statement
    const module = `globalThis.process.getBuiltinModule(${JSON.stringify(id)})`
    if (clause === undefined) return `${module};`
    const [, defaultName, named] = /^(?:\*\s+as\s+)?([\w$]+)?\s*,?\s*(\{[^}]*\})?$/.exec(clause.trim()) ?? []
    if (defaultName === undefined && named === undefined) throw new Error(`bundle-cli: cannot rewrite ${statement}`)
    const parts = []
    if (defaultName !== undefined) parts.push(`const ${defaultName} = ${module};`)
    if (named !== undefined) parts.push(`const ${named.replace(/\s+as\s+/g, ': ')} = ${module};`)
    return parts.join(' ')
  })
}

/**
 * V8 keeps every module's source text for as long as the module lives, and one character above
 * U+00FF makes it a two-byte string: the big chunks held twice their size for the life of `serve`.
 * `charset: 'ascii'` escapes strings and identifiers; what it leaves (template literals, legal
 * comments) is escaped here, which reads the same in a comment and cooks to the same text in an
 * untagged or cooked template (no chunk reads `.raw` of a template with such a character).
 */
function asciiOnly(code, fileName) {
  // Per UTF-16 code unit: a character beyond U+FFFF becomes its two surrogates, which read back as it.
  return code.replace(/(\\?)([\u0080-\uffff])/g, (match, backslash, unit) => {
    if (backslash) throw new Error(`bundle-cli: cannot escape ${JSON.stringify(match)} in ${fileName}`)
    return `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`
  })
}

rmSync(outDir, { recursive: true, force: true })
const { output } = await build({
  input: {
    main: fileURLToPath(new URL('../dist/cli/main.js', import.meta.url)),
  },
  platform: 'node',
  // Node 20 runs the code as it is; no down-levelling helpers (which would need @oxc-project/runtime).
  transform: { target: 'node20' },
  logLevel: 'warn',
  external: (id, importer) => {
    if (isBuiltin(id)) return true
    const name = packageName(id)
    if (name === null) return false
    if (LISTHEN_OPTIONAL.has(name)) return true
    // A dependency of an inlined package (ora → cli-cursor…) is inlined with it.
    if (INLINED.has(name) || (importer && importer.includes('/node_modules/'))) return false
    return true
  },
  plugins: [
    lazyPackages,
    { name: 'builtins-without-esm-facades', renderChunk: (code, chunk) => ({ code: asciiOnly(withoutBuiltinFacades(code), chunk.fileName) }) },
  ],
  output: {
    dir: outDir,
    format: 'esm',
    // Smaller source texts held by V8 (see asciiOnly): ASCII only, no doc comments (~10% of the text).
    charset: 'ascii',
    comments: { legal: true, annotation: false, jsdoc: false },
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
  },
})

// Every package the chunks still import must be a dependency: a helper the bundler injects (or a
// dev-only package) would only fail on a user's machine.
const { dependencies } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const missing = new Set()
const chunkFiles = new Set(output.map((chunk) => chunk.fileName))
for (const chunk of output) {
  for (const id of chunk.type === 'chunk' ? [...chunk.imports, ...chunk.dynamicImports] : []) {
    const name = packageName(id)
    if (name !== null && !chunkFiles.has(id) && !isBuiltin(id) && !(name in dependencies) && !LISTHEN_OPTIONAL.has(name))
      missing.add(`${name} (from ${chunk.fileName})`)
  }
}
if (missing.size) {
  console.error(`bundle-cli: the bundle imports packages that are not dependencies: ${[...missing].join(', ')}`)
  process.exit(1)
}
