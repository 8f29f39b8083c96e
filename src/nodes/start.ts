import type { NodeKind } from './types.js'

const inputSchema = { type: 'object', description: 'A JSON Schema of type object; each property is one input.' }

/** Makes a flow callable over HTTP. Its output is the validated inputs, prepared by the engine. */
export const startNode: NodeKind = {
  type: 'start',
  description: 'Entry point: HTTP method, authentication and JSON-Schema inputs.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      description: { type: 'string' },
      method: { enum: ['get', 'post', 'put', 'patch', 'delete'], default: 'post' },
      auth: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'token'],
            properties: { type: { const: 'bearer' }, token: { type: 'string' } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'username', 'password'],
            properties: { type: { const: 'basic' }, username: { type: 'string' }, password: { type: 'string' } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'key'],
            properties: { type: { const: 'apiKey' }, key: { type: 'string' }, header: { type: 'string' } },
          },
        ],
      },
      inputs: {
        type: 'object',
        additionalProperties: false,
        properties: { path: inputSchema, query: inputSchema, headers: inputSchema, body: inputSchema },
      },
    },
  },
  ports: () => ['out'],
  async execute(context) {
    return { output: context.inputs ?? {} }
  },
}
