// Writes schema/flow.schema.json from the node registry. Run after `npm run build`:
//   node scripts/build-flow-schema.mjs
// test/project/schema.test.ts fails when the committed file differs from what this writes.
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { formatFlowSchema } from '../dist/project/schema.js'

const target = fileURLToPath(new URL('../schema/flow.schema.json', import.meta.url))
await writeFile(target, formatFlowSchema())
console.log(`wrote ${target}`)
