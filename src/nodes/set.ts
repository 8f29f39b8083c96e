import { defineNodeKind } from './define.js'

/** Computes named values from bindings; its output is the values. */
export const setNode = defineNodeKind({
  type: 'set',
  description: 'Sets named values from bindings.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['values'],
    properties: { description: { type: 'string' }, values: { type: 'object' } },
  },
  /** The values as written (bindings), resolved when the node runs. */
  parseSettings: (settings) => ({ values: settings.values }),
  ports: () => ['out'],
  async execute(context, settings) {
    return { output: context.resolve(settings.values) }
  },
})
