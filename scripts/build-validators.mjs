// Part of `npm run build` (after tsc): writes the precompiled validators (ajv standalone code) to
// src/project/generated/*.ts (committed, so tests and type checks see them) and to
// dist/project/generated/*.js (what the CLI runs). Only files whose text changed are written.
import { readFile, writeFile, mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GENERATED_MODULES, metaValidatorSource, shapeValidatorsSource } from '../dist/project/precompile.js'

const sources = { shapes: shapeValidatorsSource(), meta: metaValidatorSource() }
const root = new URL('../', import.meta.url)

async function writeIfChanged(path, text, { quiet = false } = {}) {
  const current = await readFile(path, 'utf8').catch(() => null)
  if (current === text) return
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, text)
  if (!quiet) console.log(`wrote ${path}`)
}

for (const [key, module] of Object.entries(GENERATED_MODULES)) {
  await writeIfChanged(fileURLToPath(new URL(`src/project/${module}.ts`, root)), sources[key])
  // Replaces tsc's output of the committed file, which may predate a schema change.
  await writeIfChanged(fileURLToPath(new URL(`dist/project/${module}.js`, root)), sources[key], { quiet: true })
}
