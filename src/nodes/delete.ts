import { checkTargetSettings, boundTarget, COLLECTION_SCHEMA, FILTER_SCHEMA, ID_SCHEMA, parseTargetSettings } from './document-settings.js'
import { defineNodeKind } from './define.js'

/** Deletes the documents a documentId or a filter picks: `{ deleted }`. */
export const deleteNode = defineNodeKind({
  type: 'delete',
  description: 'Deletes the documents picked by documentId or filter; output { deleted }.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['collection'],
    properties: { description: { type: 'string' }, collection: COLLECTION_SCHEMA, documentId: ID_SCHEMA, filter: FILTER_SCHEMA },
  },
  parseSettings: parseTargetSettings,
  checkSettings: (settings) => checkTargetSettings(settings, 'delete'),
  ports: () => ['out'],
  async execute(context, settings) {
    const deleted = await context.documents.delete(
      context.project.settings.projectId,
      settings.collection,
      boundTarget(context, settings, { requireValues: true }),
    )
    return { output: { deleted } }
  },
})
