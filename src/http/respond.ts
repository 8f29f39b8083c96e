// Responses built by hand: h3's HTTPError merges `status` and `message` into the body, while the
// spec fixes exact bodies such as `{ ok: false, errors: ["flow not found"] }`.
// The Run API answers through `sendJson`: status and headers go on `event.res` and the body is
// returned as text, so h3 builds srvx's light response instead of a web Response with a stream.
import type { H3Event } from 'h3'
import { capErrorList } from '../flow/reason.js'

export type HeaderPairs = Record<string, string>

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** A JSON response with the exact body given. */
export function jsonResponse(status: number, body: unknown, headers: HeaderPairs = {}): Response {
  const response = new Response(JSON.stringify(body), { status, headers: { 'content-type': JSON_CONTENT_TYPE } })
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value)
  return response
}

/**
 * The same answer as `jsonResponse`, written onto `event.res`; the handler returns the text.
 * `headers` are set after the content type (they may replace it), each in order.
 */
export function sendJson(event: H3Event, status: number, body: unknown, headers?: HeaderPairs): string {
  const text = JSON.stringify(body)
  const res = event.res
  res.status = status
  res.headers.set('content-type', JSON_CONTENT_TYPE)
  if (headers) for (const name in headers) res.headers.set(name, headers[name]!)
  return text
}

/** `{ ok: false, errors }` through `sendJson`; at most 20 errors, then "… and N more" (SPEC §17). */
export function sendError(event: H3Event, status: number, errors: string[], headers?: HeaderPairs): string {
  return sendJson(event, status, { ok: false, errors: capErrorList(errors) }, headers)
}

/** `{ ok: false, errors }` with the given status (the list capped as in `sendError`). */
export function errorResponse(status: number, errors: string[], headers: HeaderPairs = {}, extra: Record<string, unknown> = {}): Response {
  return jsonResponse(status, { ok: false, errors: capErrorList(errors), ...extra }, headers)
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
