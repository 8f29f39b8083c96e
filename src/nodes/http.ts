import type { NodeKind } from './types.js'

const DEFAULT_TIMEOUT_MS = 10_000

/** Calls an HTTP endpoint. A network error or timeout fails the node; any HTTP status does not. */
export const httpNode: NodeKind = {
  type: 'http',
  description: 'Sends an HTTP request; its output is { status, headers, body }.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      description: { type: 'string' },
      method: { enum: ['get', 'post', 'put', 'patch', 'delete', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'], default: 'get' },
      url: { type: 'string' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: {},
      timeoutMs: { type: 'integer', minimum: 1, default: DEFAULT_TIMEOUT_MS },
    },
  },
  ports: () => ['out'],
  async execute(context) {
    const { settings } = context.node
    const method = String(settings.method ?? 'get').toUpperCase()
    const url = String(context.resolve(settings.url) ?? '')
    if (!URL.canParse(url)) throw new Error(`HTTP ${method} request has an invalid URL "${url}"`)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries((context.resolve(settings.headers ?? {}) ?? {}) as Record<string, unknown>)) {
      headers[name.toLowerCase()] = String(value ?? '')
    }
    let body: string | undefined
    if (settings.body !== undefined && method !== 'GET') {
      const value = context.resolve(settings.body)
      body = typeof value === 'string' ? value : JSON.stringify(value)
      if (typeof value !== 'string' && !headers['content-type']) headers['content-type'] = 'application/json'
    }
    const timeoutMs = typeof settings.timeoutMs === 'number' ? settings.timeoutMs : DEFAULT_TIMEOUT_MS
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)])
    let response: Response
    let text: string
    try {
      response = await fetch(url, { method, headers, body, signal })
      text = await response.text()
    } catch (error) {
      throw new Error(`HTTP ${method} request ${failureReason(error, context.signal, timeoutMs)}`, { cause: error })
    }
    let parsed: unknown = text
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = text
      }
    }
    return { output: { status: response.status, headers: Object.fromEntries(response.headers), body: parsed } }
  },
}

/** Why a request failed, in words: its own timeout, the run being stopped, or the network (with the system code). */
function failureReason(error: unknown, runSignal: AbortSignal, timeoutMs: number): string {
  if (runSignal.aborted) return 'stopped with the run'
  if (error instanceof Error && error.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : ''
  return detail ? `network error (${detail})` : 'network error'
}
