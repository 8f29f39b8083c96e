import { isRecord } from '../internal/is-record.js'
import { defineNodeKind } from './define.js'
import type { NodeResponseDoc } from './types.js'

/** The status an End answers with when it names none. */
export const DEFAULT_END_STATUS = 200

/** Headers the Run API owns: an End cannot set them (transport), or the document names them itself. */
const UNDOCUMENTED_HEADERS = new Set(['content-type', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'x-run-id'])

interface EndSettings {
  status: number
  /** The body as written (bindings), resolved when the node runs. */
  body: unknown
  /** Header name → value as written (bindings). */
  headers: Record<string, unknown>
  /** JSON Schema of the body, for the OpenAPI document; null when none is written. */
  schema: Record<string, unknown> | null
}

function parseEndSettings(settings: Record<string, unknown>): EndSettings {
  const { status } = settings
  return {
    status: typeof status === 'number' && Number.isInteger(status) ? status : DEFAULT_END_STATUS,
    body: settings.body ?? null,
    headers: isRecord(settings.headers) ? settings.headers : {},
    schema: isRecord(settings.schema) ? settings.schema : null,
  }
}

/** What an End answers, for the OpenAPI document: JSON unless its headers set another content type. */
function documentedAnswer(settings: EndSettings): NodeResponseDoc {
  const headers = Object.keys(settings.headers)
  const contentType = headers.find((name) => name.toLowerCase() === 'content-type')
  const typeValue = contentType ? String(settings.headers[contentType] ?? '') : ''
  const media = typeValue.split(';')[0]!.trim().toLowerCase()
  // A template in the content type (`{{ ... }}`) is only known at run time: documented as JSON.
  const isOther = media !== '' && !media.includes('{') && !/^application\/(?:[\w.+-]+\+)?json$/.test(media)
  return {
    status: settings.status,
    mediaType: isOther ? media : 'application/json',
    schema: settings.schema ?? (isOther ? { type: 'string' } : null),
    headers: headers.filter((name) => !UNDOCUMENTED_HEADERS.has(name.toLowerCase())),
  }
}

/** Decides the response: status, body (bindings) and optional headers. */
export const endNode = defineNodeKind({
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
      status: { type: 'integer', minimum: 200, maximum: 599, default: DEFAULT_END_STATUS },
      body: { description: 'The response body; strings may hold {{ references }}.' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      schema: { type: 'object', description: 'JSON Schema of the body, for the OpenAPI document.' },
    },
  },
  parseSettings: parseEndSettings,
  ports: () => [],
  openapi: { response: documentedAnswer },
  async execute(context, settings) {
    const body = context.resolve(settings.body)
    const headers: Record<string, string> = {}
    const written = context.resolve(settings.headers) as Record<string, unknown>
    for (const [name, value] of Object.entries(written)) headers[name] = String(value ?? '')
    const response = { status: settings.status, body, headers }
    return { output: response, response }
  },
})
