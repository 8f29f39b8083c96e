import { checkFieldName, checkTargetSettings, boundTarget, COLLECTION_SCHEMA, FILTER_SCHEMA, ID_SCHEMA, parseTargetSettings } from './document-settings.js'
import { defineNodeKind } from './define.js'
import type { SettingsProblem } from './types.js'

/** Fields to set (top level), after checking a value that came from a {{ reference }}. */
function setFields(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined) return {}
  if (typeof value !== 'object' || Array.isArray(value))
    throw new Error(`set must give an object of fields, got ${Array.isArray(value) ? 'a list' : typeof value}`)
  for (const key of Object.keys(value)) {
    const problem = checkFieldName(key, 'set')
    if (problem) throw new Error(problem)
  }
  return value as Record<string, unknown>
}

function unsetFields(value: unknown): string[] {
  if (value === null || value === undefined) return []
  const list = Array.isArray(value) ? value : [value]
  return list.map((item) => {
    const problem = typeof item === 'string' ? checkFieldName(item, 'unset') : `unset: each item must be a field name, got ${JSON.stringify(item)}`
    if (problem) throw new Error(problem)
    return item as string
  })
}

/** Changes the documents a documentId or a filter picks: `set` merged in (top-level fields), `unset` removed. */
export const updateNode = defineNodeKind({
  type: 'update',
  description: 'Changes the documents picked by documentId or filter: set merges fields in, unset removes fields; output { matched, modified }.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['collection'],
    anyOf: [{ required: ['set'] }, { required: ['unset'] }],
    properties: {
      description: { type: 'string' },
      collection: COLLECTION_SCHEMA,
      documentId: ID_SCHEMA,
      filter: FILTER_SCHEMA,
      set: { type: ['object', 'string'], description: 'Top-level fields to set (bindings), or one {{ reference }} to an object.' },
      unset: { type: 'array', items: { type: 'string' }, description: 'Top-level fields to remove.' },
    },
  },
  /** set and unset as written (bindings), resolved and checked when the node runs. */
  parseSettings: (settings) => ({ ...parseTargetSettings(settings), set: settings.set, unset: settings.unset }),
  checkSettings(settings) {
    const problems: SettingsProblem[] = checkTargetSettings(settings, 'update')
    const set = settings.set
    if (set !== null && typeof set === 'object') {
      for (const key of Object.keys(set)) {
        const message = checkFieldName(key, 'set')
        if (message) problems.push({ path: ['set', key], key: true, message })
      }
    }
    if (Array.isArray(settings.unset)) {
      settings.unset.forEach((field, index) => {
        const message = typeof field === 'string' && !field.includes('{{') ? checkFieldName(field, 'unset') : null
        if (message) problems.push({ path: ['unset', index], message })
      })
    }
    return problems
  },
  ports: () => ['out'],
  async execute(context, settings) {
    const change = { set: setFields(context.resolve(settings.set)), unset: unsetFields(context.resolve(settings.unset)) }
    const result = await context.documents.update(
      context.project.settings.projectId,
      settings.collection,
      boundTarget(context, settings, { requireValues: true }),
      change,
    )
    return { output: result }
  },
})
