import { valuesEqual } from '../language/condition.js'
import type { NodeKind } from './types.js'

interface SwitchCase {
  value: unknown
  port: string
}

function casesOf(settings: Record<string, unknown>): SwitchCase[] {
  return Array.isArray(settings.cases) ? (settings.cases as SwitchCase[]) : []
}

function defaultPortOf(settings: Record<string, unknown>): string {
  return typeof settings.default === 'string' ? settings.default : 'default'
}

/** Follows the port of the first case whose value equals the switch value, else the default port. */
export const switchNode: NodeKind = {
  type: 'switch',
  description: 'Follows the port of the first matching case, or the default port.',
  singlePort: false,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['value', 'cases'],
    properties: {
      description: { type: 'string' },
      value: {},
      cases: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['value', 'port'],
          properties: { value: {}, port: { type: 'string', minLength: 1 } },
        },
      },
      default: { type: 'string', minLength: 1 },
    },
  },
  ports(settings) {
    return [...new Set([...casesOf(settings).map((c) => String(c.port)), defaultPortOf(settings)])]
  },
  async execute(context) {
    const { settings } = context.node
    const value = context.resolve(settings.value)
    const match = casesOf(settings).find((c) => valuesEqual(value, context.resolve(c.value)))
    const port = match ? String(match.port) : defaultPortOf(settings)
    return { output: { value, port }, port }
  },
}
