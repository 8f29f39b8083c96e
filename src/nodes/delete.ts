import { checkTargetSettings, boundTarget, collectionOf, COLLECTION_SCHEMA, FILTER_SCHEMA, ID_SCHEMA } from './document-settings.js'
import type { NodeKind } from './types.js'

/** Deletes the documents a documentId or a filter picks: `{ deleted }`. */
export const deleteNode: NodeKind = {
  type: 'delete',
  description: 'Deletes the documents picked by documentId or filter; output { deleted }.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['collection'],
    properties: { description: { type: 'string' }, collection: COLLECTION_SCHEMA, documentId: ID_SCHEMA, filter: FILTER_SCHEMA },
  },
  checkSettings: (settings) => checkTargetSettings(settings, 'delete'),
  ports: () => ['out'],
  async execute(context) {
    const deleted = await context.documents.delete(context.project.settings.projectId, collectionOf(context), boundTarget(context, { requireValues: true }))
    return { output: { deleted } }
  },
}
