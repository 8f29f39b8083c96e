// Writes schema/test.schema.json (the JSON Schema of tests/**/*.test.yaml) from src/model/test-file-shape.ts.
// Run after `npm run build`: node scripts/build-test-schema.mjs
// test/testing/schema.test.ts fails when the committed file differs from what this writes.
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { formatTestSchema } from '../dist/model/test-file-shape.js'

const target = fileURLToPath(new URL('../schema/test.schema.json', import.meta.url))
await writeFile(target, formatTestSchema())
console.log(`wrote ${target}`)
