import { boundTarget, checkFilterSettings, COLLECTION_SCHEMA, FILTER_SCHEMA, parseTargetSettings, SORT_SCHEMA, writtenSort } from './document-settings.js'
import { defineNodeKind } from './define.js'
import type { NodeContext } from './types.js'

const FIND_DEFAULT_LIMIT = 100
const FIND_MAX_LIMIT = 1000

// minimum/maximum apply to numbers only and pattern to text only: one schema, one message per mistake.
const COUNT_SCHEMA = (description: string, maximum?: number) => ({
  type: ['integer', 'string'],
  minimum: 0,
  ...(maximum === undefined ? {} : { maximum }),
  pattern: '\\{\\{',
  description: `${description} A whole number or a {{ reference }}.`,
})

/** A whole number from a setting (a {{ reference }} may give text, like a query parameter). */
function countSetting(context: NodeContext, name: 'limit' | 'skip', written: unknown, fallback: number): number {
  if (written === undefined) return fallback
  const value = context.resolve(written)
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0) {
    throw new Error(`${name} must be a whole number of 0 or more, got ${JSON.stringify(value)}`)
  }
  return number
}

/** Queries a collection: `{ documents, count }`, count being every match, not only this page. */
export const findNode = defineNodeKind({
  type: 'find',
  description: 'Finds documents matching a filter; output { documents, count } (count: all matches, not only this page).',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['collection'],
    properties: {
      description: { type: 'string' },
      collection: COLLECTION_SCHEMA,
      filter: FILTER_SCHEMA,
      sort: SORT_SCHEMA,
      limit: COUNT_SCHEMA(
        `At most this many documents (default ${FIND_DEFAULT_LIMIT}, at most ${FIND_MAX_LIMIT}; a larger value from a reference is capped).`,
        FIND_MAX_LIMIT,
      ),
      skip: COUNT_SCHEMA('Leave out this many matches first (paging).'),
    },
  },
  /** limit and skip as written: a number, or a {{ reference }} read when the node runs. */
  parseSettings: (settings) => ({ ...parseTargetSettings(settings), sort: writtenSort(settings), limit: settings.limit, skip: settings.skip }),
  checkSettings: checkFilterSettings,
  ports: () => ['out'],
  async execute(context, settings) {
    const limit = Math.min(countSetting(context, 'limit', settings.limit, FIND_DEFAULT_LIMIT), FIND_MAX_LIMIT)
    const skip = countSetting(context, 'skip', settings.skip, 0)
    const result = await context.documents.find(context.project.settings.projectId, settings.collection, {
      filter: boundTarget(context, settings), // no filter: every document
      sort: settings.sort,
      limit,
      skip,
    })
    return { output: { documents: result.documents, count: result.count } }
  },
})
