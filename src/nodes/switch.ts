import { valuesEqual } from '../language/condition.js'
import { defineNodeKind } from './define.js'

interface SwitchCase {
  /** Compared with the switch value once resolved (bindings). */
  value: unknown
  port: string
}

interface SwitchSettings {
  value: unknown
  cases: SwitchCase[]
  /** The port taken when no case matches (default `default`). */
  defaultPort: string
}

function parseSwitchSettings(settings: Record<string, unknown>): SwitchSettings {
  const cases = Array.isArray(settings.cases) ? (settings.cases as { value?: unknown; port?: unknown }[]) : []
  return {
    value: settings.value,
    cases: cases.map((c) => ({ value: c?.value, port: String(c?.port) })),
    defaultPort: typeof settings.default === 'string' ? settings.default : 'default',
  }
}

/** Follows the port of the first case whose value equals the switch value, else the default port. */
export const switchNode = defineNodeKind({
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
  parseSettings: parseSwitchSettings,
  ports(settings) {
    return [...new Set([...settings.cases.map((c) => c.port), settings.defaultPort])]
  },
  async execute(context, settings) {
    const value = context.resolve(settings.value)
    const match = settings.cases.find((c) => valuesEqual(value, context.resolve(c.value)))
    const port = match ? match.port : settings.defaultPort
    return { output: { value, port }, port }
  },
})
