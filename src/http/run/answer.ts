// How the Run API sends an `OutcomeAnswer` (src/flow/answer.ts): status and headers on `event.res`
// and the body returned as text, so h3 builds srvx's light response (respond.ts). A bodiless answer
// (204, 205, 304, no End) is a Response, so no `content-length: 0` or text type is added. The
// flow's CORS headers go on last, over an End's own.
import type { H3Event } from 'h3'
import type { OutcomeAnswer } from '../../flow/answer.js'
import { sendJson, type HeaderPairs } from '../respond.js'

export function sendOutcome(event: H3Event, answer: OutcomeAnswer, cors: HeaderPairs | undefined): Response | string {
  if (answer.body === undefined) {
    const response = new Response(null, { status: answer.status })
    setHeaders(response.headers, answer.headers)
    setHeaders(response.headers, cors)
    return response
  }
  let text: string
  if (!answer.text) text = sendJson(event, answer.status, answer.body)
  else {
    // The End chose another type (text, HTML, XML): a string body is sent as it is.
    event.res.status = answer.status
    text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)
  }
  setHeaders(event.res.headers, answer.headers)
  setHeaders(event.res.headers, cors)
  return text
}

/** The same status and headers without the body (HEAD); Content-Length tells the GET body's size. */
export function withoutBody(event: H3Event, answer: Response | string): Response {
  if (answer instanceof Response) return new Response(null, { status: answer.status, headers: answer.headers })
  const headers = new Headers(event.res.headers)
  headers.set('content-length', String(Buffer.byteLength(answer)))
  return new Response(null, { status: event.res.status ?? 200, headers })
}

function setHeaders(target: Headers, headers: HeaderPairs | undefined): void {
  if (!headers) return
  for (const name in headers) {
    try {
      target.set(name, headers[name]!)
    } catch {
      // An End header with characters HTTP does not allow is left out rather than failing the response.
    }
  }
}
