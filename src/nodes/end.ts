import type { FlowNode } from '../model/project.js'
import type { NodeKind, NodeResponseDoc } from './types.js'

/** Headers the Run API owns: an End cannot set them (transport), or the document names them itself. */
const UNDOCUMENTED_HEADERS = new Set(['content-type', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'x-run-id'])

/** What an End answers, for the OpenAPI document: JSON unless its headers set another content type. */
function documentedAnswer(node: FlowNode): NodeResponseDoc {
  const { settings } = node
  const status = typeof settings.status === 'number' && Number.isInteger(settings.status) ? settings.status : 200
  const written = settings.headers
  const headers = written && typeof written === 'object' && !Array.isArray(written) ? Object.keys(written) : []
  const contentType = headers.find((name) => name.toLowerCase() === 'content-type')
  const typeValue = contentType ? String((written as Record<string, unknown>)[contentType] ?? '') : ''
  const media = typeValue.split(';')[0]!.trim().toLowerCase()
  const raw = settings.schema
  const declared = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null
  // A template in the content type (`{{ ... }}`) is only known at run time: documented as JSON.
  const isOther = media !== '' && !media.includes('{') && !/^application\/(?:[\w.+-]+\+)?json$/.test(media)
  return {
    status,
    mediaType: isOther ? media : 'application/json',
    schema: declared ?? (isOther ? { type: 'string' } : null),
    headers: headers.filter((name) => !UNDOCUMENTED_HEADERS.has(name.toLowerCase())),
  }
}

/** Decides the response: status, body (bindings) and optional headers. */
export const endNode: NodeKind = {
  type: 'end',
  description: 'Ends the run and answers with a status, a body and headers.',
  singlePort: true,
  terminates: true,
  noCommonSettings: true,
  literalSettings: ['schema'],
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
  openapi: { response: documentedAnswer },
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
