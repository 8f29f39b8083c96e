// The http node's transport: redirects followed by hand (so credential headers never cross to
// another origin) and the answer's body read as a stream with a byte cap, both under one deadline.
import type { FlowNode } from '../model/project.js'
import type { FetchAnswer, NodeFetch } from '../model/run.js'

export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
const MAX_REDIRECTS = 5

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
/** Headers that always carry credentials; any header set from a secret is dropped as well. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization'])

/** How much of an answer's body a failed http step keeps (SPEC §21: the first 2 KiB). */
const FAILED_BODY_BYTES = 2048

export class AnswerTooLarge extends Error {}
export class RedirectRefused extends Error {}

export interface OutgoingRequest {
  method: string
  url: URL
  headers: Record<string, string>
  body: string | undefined
  /** Lower-case names of headers whose value came from a secret: not sent to another origin. */
  secretHeaders: ReadonlySet<string>
  signal: AbortSignal
}

/**
 * Sends the request and follows up to MAX_REDIRECTS redirects as fetch would (303, and 301/302
 * after a POST, become a GET without body), except that a redirect to another origin drops
 * Authorization, Cookie, Proxy-Authorization and every header set from a secret.
 */
export async function sendFollowingRedirects(fetch: NodeFetch, node: FlowNode, request: OutgoingRequest): Promise<FetchAnswer> {
  let { method, url, headers, body } = request
  for (let hop = 0; ; hop++) {
    const response = await fetch(url, { method, headers, body, signal: request.signal, redirect: 'manual' }, node)
    const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null
    if (location === null) return response
    await response.body?.cancel().catch(() => {})
    if (hop >= MAX_REDIRECTS) throw new RedirectRefused(`followed ${MAX_REDIRECTS} redirects and was sent on again (last to ${safeUrl(url)})`)
    let next: URL
    try {
      next = new URL(location, url)
    } catch {
      throw new RedirectRefused(`was redirected to a location that is not a URL`)
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new RedirectRefused(`was redirected to a ${next.protocol} URL, which is not followed`)
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      if (method !== 'HEAD') method = 'GET'
      body = undefined
      headers = withoutHeaders(headers, (name) => name === 'content-type' || name === 'content-length')
    }
    if (next.origin !== url.origin) {
      headers = withoutHeaders(headers, (name) => CREDENTIAL_HEADERS.has(name) || request.secretHeaders.has(name))
    }
    url = next
  }
}

/**
 * The body as text, read chunk by chunk: more than `maxBytes` cancels the read and throws
 * AnswerTooLarge; the signal (the node's deadline) cancels it too, so a slow drip cannot outlast it.
 */
export async function readCappedText(response: FetchAnswer, maxBytes: number, signal: AbortSignal): Promise<string> {
  const declared = Number(response.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {})
    throw new AnswerTooLarge(tooLarge(maxBytes, `it declared ${declared} bytes`))
  }
  if (response.body === undefined) {
    // A `flowctl test` mock: its text is already in memory; the cap still applies.
    const text = await response.text()
    if (Buffer.byteLength(text) > maxBytes) throw new AnswerTooLarge(tooLarge(maxBytes, 'more was sent'))
    return text
  }
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  let onAbort: (() => void) | undefined
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'))
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  aborted.catch(() => {})
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), aborted])
      if (done) break
      total += value.byteLength
      if (total > maxBytes) throw new AnswerTooLarge(tooLarge(maxBytes, 'more was sent'))
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    throw error
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort)
  }
  return new TextDecoder('utf-8').decode(Buffer.concat(chunks, total))
}

function tooLarge(maxBytes: number, detail: string): string {
  return `answer is larger than maxResponseBytes (${maxBytes} bytes; ${detail})`
}

function withoutHeaders(headers: Record<string, string>, drop: (name: string) => boolean): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (!drop(name)) kept[name] = value
  return kept
}

/** A URL for a message: origin and path only (its query may hold a key). */
function safeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`
}

/** The first `maxBytes` bytes of `text`, never ending inside a character, with a marker when cut. */
export function bodyPrefix(text: string, maxBytes: number = FAILED_BODY_BYTES): string {
  // A character takes at most 3 UTF-8 bytes per UTF-16 unit, so short texts need no encoding.
  if (text.length * 3 <= maxBytes) return text
  const bytes = Buffer.from(text)
  if (bytes.byteLength <= maxBytes) return text
  let end = maxBytes
  // Back off to the start of a character (continuation bytes are 10xxxxxx).
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return `${bytes.subarray(0, end).toString('utf8')}… [${bytes.byteLength - end} more bytes]`
}
