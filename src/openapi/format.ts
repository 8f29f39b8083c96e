// Serializes a document for `export-openapi`: the generator already fixed the key order, so neither
// format re-sorts anything. Both end with one newline, as files committed to git should.
import { stringify } from 'yaml'
import type { OpenApiDocument } from './types.js'

export type OpenApiFormat = 'json' | 'yaml'

export function formatOpenApi(doc: OpenApiDocument, format: OpenApiFormat): string {
  if (format === 'json') return `${JSON.stringify(doc, null, 2)}\n`
  // No anchors/aliases: a schema object shared by two operations is written out twice.
  return stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 })
}
