// Responses built by hand: h3's HTTPError merges `status` and `message` into the body, while the
// spec fixes exact bodies such as `{ ok: false, errors: ["flow not found"] }`.

export type HeaderPairs = Record<string, string>

/** A JSON response with the exact body given. */
export function jsonResponse(status: number, body: unknown, headers: HeaderPairs = {}): Response {
  const response = new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } })
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value)
  return response
}

/** `{ ok: false, errors }` with the given status. */
export function errorResponse(status: number, errors: string[], headers: HeaderPairs = {}, extra: Record<string, unknown> = {}): Response {
  return jsonResponse(status, { ok: false, errors, ...extra }, headers)
}

export function htmlResponse(status: number, html: string, headers: HeaderPairs = {}): Response {
  const response = new Response(html, {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'x-content-type-options': 'nosniff' },
  })
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value)
  return response
}

export const INVALID_TOKEN = 'invalid token'
export const FLOW_NOT_FOUND = 'flow not found'
export const STORE_UNAVAILABLE = 'store unavailable'
