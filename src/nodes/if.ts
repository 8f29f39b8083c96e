import { evaluateCondition } from '../language/condition.js'
import { defineNodeKind } from './define.js'

/** Branches on a condition: port `true` or `false`. */
export const ifNode = defineNodeKind({
  type: 'if',
  description: 'Follows the port true or false depending on a condition.',
  singlePort: false,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['condition'],
    properties: {
      description: { type: 'string' },
      condition: { $ref: '#/$defs/condition' },
    },
  },
  /** The condition as written (its operands are bindings). */
  parseSettings: (settings) => ({ condition: settings.condition }),
  ports: () => ['true', 'false'],
  async execute(context, settings) {
    const result = evaluateCondition(settings.condition, context.resolve)
    return { output: { result }, port: result ? 'true' : 'false' }
  },
})
