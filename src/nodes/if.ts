import { evaluateCondition } from '../language/condition.js'
import type { NodeKind } from './types.js'

/** Branches on a condition: port `true` or `false`. */
export const ifNode: NodeKind = {
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
  ports: () => ['true', 'false'],
  async execute(context) {
    const result = evaluateCondition(context.node.settings.condition, context.resolve)
    return { output: { result }, port: result ? 'true' : 'false' }
  },
}
