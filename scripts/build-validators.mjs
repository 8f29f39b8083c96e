// Part of `npm run build` (after tsc): writes the precompiled validators (ajv standalone code, CommonJS)
// to dist/generated/ — build output, not in git. src/project/ajv.ts loads them from `../../dist/generated/`,
// which is the same folder from src/project (vitest), dist/project and dist/bin (the bundle).
import { readFile, writeFile, mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GENERATED_FILES, metaValidatorSource, shapeValidatorsSource } from '../dist/project/precompile.js'

const sources = { shapes: shapeValidatorsSource(), meta: metaValidatorSource() }
const outDir = new URL('../dist/generated/', import.meta.url)

for (const [key, file] of Object.entries(GENERATED_FILES)) {
  const path = fileURLToPath(new URL(file, outDir))
  // Only when the text changed, so the file's time stamp says when the schemas last changed.
  if ((await readFile(path, 'utf8').catch(() => null)) === sources[key]) continue
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, sources[key])
}
