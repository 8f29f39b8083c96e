import { collectionOf, COLLECTION_SCHEMA, documentId, ID_SCHEMA } from './document-settings.js'
import type { NodeKind } from './types.js'

/** Reads one document by its id (documentId): port `found` with the document, or `missing` with null. */
export const getNode: NodeKind = {
  type: 'get',
  description: 'Reads one document by its id (documentId); follows found (output: the document, with _id) or missing (output: null).',
  singlePort: false,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['collection', 'documentId'],
    properties: { description: { type: 'string' }, collection: COLLECTION_SCHEMA, documentId: ID_SCHEMA },
  },
  ports: () => ['found', 'missing'],
  async execute(context) {
    const id = documentId(context.resolve(context.node.settings.documentId))
    const document = id === null ? null : await context.documents.get(context.project.settings.projectId, collectionOf(context), id)
    return { output: document, port: document === null ? 'missing' : 'found' }
  },
}
