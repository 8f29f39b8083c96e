import { defineNodeKind } from './define.js'

/** Writes a document into a collection of the project's store. */
export const insertNode = defineNodeKind({
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
  parseSettings: (settings) => ({ collection: String(settings.collection), document: settings.document }),
  ports: () => ['out'],
  async execute(context, settings) {
    const document = context.resolve(settings.document)
    const insertedId = await context.documents.insert(context.project.settings.projectId, settings.collection, document)
    return { output: { insertedId, acknowledged: true } }
  },
})
