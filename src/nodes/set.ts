import type { NodeKind } from './types.js'

/** Computes named values from bindings; its output is the values. */
export const setNode: NodeKind = {
  type: 'set',
  description: 'Sets named values from bindings.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['values'],
    properties: { description: { type: 'string' }, values: { type: 'object' } },
  },
  ports: () => ['out'],
  async execute(context) {
    return { output: context.resolve(context.node.settings.values) }
  },
}
