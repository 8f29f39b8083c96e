import type { NodeKind } from './types.js'

/** Writes a document into a collection of the project's store. */
export const insertNode: NodeKind = {
  type: 'insert',
  description: 'Writes a document into a collection; its output is { insertedId, acknowledged }.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['collection', 'document'],
    properties: {
      description: { type: 'string' },
      collection: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
      document: { type: ['object', 'string'], description: 'An object of bindings, or one {{ reference }} to an object.' },
    },
  },
  ports: () => ['out'],
  async execute(context) {
    const { settings } = context.node
    const document = context.resolve(settings.document)
    const insertedId = await context.documents.insert(context.project.settings.projectId, String(settings.collection), document)
    return { output: { insertedId, acknowledged: true } }
  },
}
