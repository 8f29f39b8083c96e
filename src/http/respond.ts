// Answers of the server. Successes are built here by hand; every error answer is a thrown
// FlowctlError (src/errors.ts) that `renderError` turns into the exact body the spec fixes,
// `{ ok: false, errors: [...] }` (plus the error's `fields`), with the error's headers.
// The Run API answers through `sendJson`: status and headers go on `event.res` and the body is
// returned as text, so h3 builds srvx's light response instead of a web Response with a stream.
import type { H3Event } from 'h3'
import type { FlowctlError } from '../errors.js'
import { errorBody } from '../flow/answer.js'
import { rejectionsCountedFor, type RejectionCounter } from './rejections.js'

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

/**
 * The answer of a thrown FlowctlError, written onto `event.res` (headers a route set before
 * throwing, such as a flow's CORS answer, stay): `{ ok: false, errors, ...fields }` with at most 20
 * errors, then "… and N more" (SPEC §17), and the error's own headers.
 */
function renderError(event: H3Event, error: FlowctlError): string {
  return sendJson(event, error.httpStatus, errorBody(error), error.headers)
}

/**
 * Every error answer: counted on /status when the request's route counts its refusals (never a
 * 500), then rendered; a HEAD answer tells the GET body's size in Content-Length.
 */
export function answerError(event: H3Event, error: FlowctlError, rejections: RejectionCounter): string {
  const countedFor = rejectionsCountedFor(event)
  if (countedFor !== undefined && error.code !== 'INTERNAL') rejections.count(countedFor, error.httpStatus)
  const text = renderError(event, error)
  if (event.req.method === 'HEAD') event.res.headers.set('content-length', String(Buffer.byteLength(text)))
  return text
}

export function htmlResponse(status: number, html: string, headers: HeaderPairs = {}): Response {
  const response = new Response(html, {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'x-content-type-options': 'nosniff' },
  })
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value)
  return response
}
