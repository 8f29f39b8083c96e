import { COLLECTION_SCHEMA, documentId, ID_SCHEMA } from './document-settings.js'
import { defineNodeKind } from './define.js'

/** Reads one document by its id (documentId): port `found` with the document, or `missing` with null. */
export const getNode = defineNodeKind({
  type: 'get',
  description: 'Reads one document by its id (documentId); follows found (output: the document, with _id) or missing (output: null).',
  singlePort: false,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['collection', 'documentId'],
    properties: { description: { type: 'string' }, collection: COLLECTION_SCHEMA, documentId: ID_SCHEMA },
  },
  parseSettings: (settings) => ({ collection: String(settings.collection), documentId: settings.documentId }),
  ports: () => ['found', 'missing'],
  async execute(context, settings) {
    const id = documentId(context.resolve(settings.documentId))
    const document = id === null ? null : await context.documents.get(context.project.settings.projectId, settings.collection, id)
    return { output: document, port: document === null ? 'missing' : 'found' }
  },
})
