// What both stores share about documents: how one is given back (with `_id`), how an update changes
// one, and how an expression index is named.
import { createHash } from 'node:crypto'
import type { FieldPath } from '../model/document-filter.js'
import type { DocumentChange } from '../model/store.js'
import { isRecord } from '../internal/is-record.js'

/** The document as read back: `_id` first (the row's id wins over a stored `_id`). Non-objects as stored. */
export function withId(id: string, body: unknown): unknown {
  if (!isRecord(body)) return body
  const { _id: _ignored, ...rest } = body
  return { _id: id, ...rest }
}

/** The document after `change`: `unset` fields removed, then `set` fields merged (top level); null for a non-object. */
export function applyChange(body: unknown, change: DocumentChange): Record<string, unknown> | null {
  if (!isRecord(body)) return null
  const next: Record<string, unknown> = { ...body }
  for (const field of change.unset) delete next[field]
  for (const [field, value] of Object.entries(change.set)) if (field !== '_id' && value !== undefined) next[field] = value
  return next
}

/**
 * The name of the expression index on a field path. One index per path serves every collection of
 * every project (its columns are project_id, collection, then the field), so the name depends on
 * the path alone: readable part plus a hash, under PostgreSQL's 63-character limit.
 */
export function documentIndexName(path: FieldPath): string {
  const text = path.join('.')
  const readable = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30)
  const hash = createHash('sha1').update(text).digest('hex').slice(0, 10)
  return `documents_by_${readable}_${hash}`
}
