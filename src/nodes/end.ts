import type { NodeKind } from './types.js'

/** Decides the response: status, body (bindings) and optional headers. */
export const endNode: NodeKind = {
  type: 'end',
  description: 'Ends the run and answers with a status, a body and headers.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      description: { type: 'string' },
      status: { type: 'integer', minimum: 200, maximum: 599, default: 200 },
      body: { description: 'The response body; strings may hold {{ references }}.' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      schema: { type: 'object', description: 'JSON Schema of the body, for the OpenAPI document.' },
    },
  },
  ports: () => [],
  async execute(context) {
    const { settings } = context.node
    const status = typeof settings.status === 'number' ? settings.status : 200
    const body = context.resolve(settings.body ?? null)
    const headers: Record<string, string> = {}
    const written = context.resolve(settings.headers ?? {}) as Record<string, unknown>
    for (const [name, value] of Object.entries(written)) headers[name] = String(value ?? '')
    const response = { status, body, headers }
    return { output: response, response }
  },
}
