// What the document node kinds (get, find, update, delete) share: their settings' schemas, the
// load-time check of filters and sorts, their typed settings, and the run-time filter of an `id`
// and/or a `filter`. A filter is parsed once, when the project loads, from the flow file as written:
// operators come from there only; its values are bound at each run.
import {
  bindFilter,
  idFilter,
  isEmptyFilter,
  parseFieldPath,
  parseFilter,
  parseSort,
  type BindOptions,
  type FilterNode,
  type SortKey,
} from '../model/document-filter.js'
import type { JsonSchema } from '../model/project.js'
import type { NodeContext, SettingsProblem } from './types.js'

export const COLLECTION_SCHEMA: JsonSchema = { type: 'string', pattern: '^[A-Za-z0-9_-]+$', description: 'The collection (letters, digits, _ and -).' }
export const ID_SCHEMA: JsonSchema = {
  type: ['string', 'number'],
  description: "The document's id (its insertedId, _id), usually a {{ reference }}. Named documentId because id is the node's own id.",
}
export const FILTER_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'A MongoDB-style filter: { field: value }, operators $eq $ne $gt $gte $lt $lte $in $nin $exists $not, $and, $or; dotted paths.',
}
export const SORT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: { enum: [1, -1] },
  description: '{ field: 1 (ascending) | -1 (descending) }, in order.',
}

/** Problems of the `filter` and `sort` settings, positioned under them. */
export function checkFilterSettings(settings: Record<string, unknown>): SettingsProblem[] {
  const problems: SettingsProblem[] = []
  if (settings.filter !== undefined) {
    for (const p of parseFilter(settings.filter).problems) problems.push({ ...p, path: ['filter', ...p.path], message: `filter: ${p.message}` })
  }
  if (settings.sort !== undefined) {
    for (const p of parseSort(settings.sort).problems) problems.push({ ...p, path: ['sort', ...p.path], message: `sort: ${p.message}` })
  }
  return problems
}

/** update and delete: an `id`, or a filter with at least one condition, so no node can empty a collection by accident. */
export function checkTargetSettings(settings: Record<string, unknown>, kind: string): SettingsProblem[] {
  const problems = checkFilterSettings(settings)
  if (settings.documentId === undefined && isEmptyFilter(settings.filter)) {
    problems.unshift({
      path: settings.filter === undefined ? [] : ['filter'],
      message: `${kind} needs a documentId or a filter with at least one condition (it would ${kind === 'delete' ? 'delete' : 'change'} every document of the collection)`,
    })
  }
  return problems
}

/** Top-level field names for `set` keys and `unset` items. */
export function checkFieldName(name: string, where: string): string | null {
  if (name === '_id') return `${where}: _id is the document's id and cannot be changed`
  const path = parseFieldPath(name)
  if (typeof path === 'string') return `${where}: ${path}`
  return path.length > 1 ? `${where}: "${name}" must be a top-level field (no dots); set the whole object instead` : null
}

/** The settings the document kinds share, typed: the filter and sort parsed at load. */
export interface TargetSettings {
  collection: string
  /** The id as written (usually a {{ reference }}); undefined when not set. */
  documentId: unknown
  /** The filter with its operators parsed, its values still bindings; null when none is written. */
  filter: FilterNode | null
}

export function parseTargetSettings(settings: Record<string, unknown>): TargetSettings {
  const written = settings.filter
  return {
    collection: String(settings.collection),
    documentId: settings.documentId,
    // Its problems were load errors: a loaded flow has none.
    filter: written !== null && typeof written === 'object' ? parseFilter(written).filter : null,
  }
}

/**
 * The node's filter with its values resolved: `_id` equal to the id (when set) and the filter (when set).
 * `requireValues` (update, delete): a filter value that resolves to null or nothing fails the node.
 */
export function boundTarget(context: NodeContext, settings: TargetSettings, options: BindOptions = {}): FilterNode {
  const parts: FilterNode[] = []
  if (settings.documentId !== undefined) parts.push(idFilter(documentId(context.resolve(settings.documentId))))
  if (settings.filter) parts.push(bindFilter(settings.filter, context.resolve, options))
  return parts.length === 1 ? parts[0]! : { kind: 'all', items: parts }
}

/** The sort keys as written. */
export function writtenSort(settings: Record<string, unknown>): SortKey[] {
  const written = settings.sort
  if (written === null || typeof written !== 'object') return []
  return parseSort(written).sort
}

/** An id as the stores know ids (text); numbers are written as text, anything else names no document. */
export function documentId(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return null
}
