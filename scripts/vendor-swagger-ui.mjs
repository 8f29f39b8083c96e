// Part of `npm run build`: copies the Swagger UI files /docs serves from swagger-ui-dist (a dev
// dependency) into dist/swagger-ui/, with its licence. Installed copies of flowctl then need no
// swagger-ui-dist, whose @scarf/scarf dependency runs a telemetry postinstall script.
import { copyFileSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// The files src/http/routes/docs.ts serves (its ASSETS list), plus the licence that must travel with them.
const FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png', 'LICENSE', 'NOTICE']

const require = createRequire(import.meta.url)
const source = require('swagger-ui-dist/absolute-path.js')()
const target = fileURLToPath(new URL('../dist/swagger-ui/', import.meta.url))
mkdirSync(target, { recursive: true })
for (const file of FILES) copyFileSync(join(source, file), join(target, file))
