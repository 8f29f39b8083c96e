// Part of `npm run build`: bundles the browser editor (editor/src/main.tsx: React, React Flow,
// CodeMirror, yaml, dagre) into dist/editor/editor.js with its stylesheet dist/editor/editor.css,
// which `serve` sends from /edit/assets/ (no CDN: the editor works offline). Prints the sizes,
// minified and gzipped, so a change that bloats the bundle shows in every build.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'rolldown'

const root = new URL('../', import.meta.url)
const outDir = fileURLToPath(new URL('dist/editor/', root))
const require = createRequire(import.meta.url)

// codemirror-json-schema renders hover docs with markdown-it and shiki (grammars, themes, a regex
// engine: megabytes). The flow schema's descriptions are plain sentences: a small renderer stands in.
const MARKDOWN = /codemirror-json-schema[\\/]dist[\\/]utils[\\/]markdown\.js$/
const markdownStandIn = fileURLToPath(new URL('editor/src/markdown.ts', root))

rmSync(outDir, { recursive: true, force: true })
mkdirSync(outDir, { recursive: true })
await build({
  input: fileURLToPath(new URL('editor/src/main.tsx', root)),
  platform: 'browser',
  logLevel: 'warn',
  // React Flow's "use client" marks a React Server Components boundary: meaningless in this bundle.
  onLog(level, log, handler) {
    if (log.code !== 'MODULE_LEVEL_DIRECTIVE') handler(level, log)
  },
  transform: { target: 'es2022', define: { 'process.env.NODE_ENV': '"production"' }, jsx: 'react-jsx' },
  plugins: [
    {
      name: 'plain-markdown',
      resolveId: {
        filter: { id: /markdown/ },
        async handler(source, importer, options) {
          if (!importer) return null
          const resolved = await this.resolve(source, importer, { ...options, skipSelf: true })
          return resolved && MARKDOWN.test(resolved.id) ? markdownStandIn : null
        },
      },
    },
  ],
  // The code view is a dynamic import: its own chunk, fetched when the view is first opened.
  output: { dir: outDir, format: 'esm', minify: process.env.EDITOR_NO_MINIFY !== '1', entryFileNames: 'editor.js', chunkFileNames: '[name].js' },
})

// React Flow's stylesheet, then the editor's own.
const css = [readFileSync(require.resolve('@xyflow/react/dist/style.css'), 'utf8'), readFileSync(new URL('editor/src/editor.css', root), 'utf8')].join('\n')
writeFileSync(new URL('editor.css', `file://${outDir}`), css)

const sizes = readdirSync(outDir).map((name) => {
  const bytes = readFileSync(new URL(name, `file://${outDir}`))
  return `${name} ${(bytes.length / 1024).toFixed(0)} KiB (gzip ${(gzipSync(bytes).length / 1024).toFixed(0)} KiB)`
})
console.log(`bundle-editor: ${sizes.join(', ')}`)
