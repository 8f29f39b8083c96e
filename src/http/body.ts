// Reading a request body safely: a size limit checked on Content-Length and on the bytes
// actually streamed, only the content types the Start accepts (JSON, form, text; else 415), JSON
// nesting depth bounded before parsing, and keys that could pollute prototypes dropped. Under `flowctl serve` the Node
// request is read directly: a web stream over it costs more than the rest of a small run.
import type { IncomingMessage } from 'node:http'
import type { ErrorCode } from '../errors.js'
import type { BodyType } from '../model/project.js'
import { isJsonContentType } from '../flow/answer.js'
import { markParsedJson } from '../flow/unstorable-text.js'

// Where it lived first; the End's content type (flow/answer.ts) is read with the same rule.
export { isJsonContentType }

export const MAX_JSON_DEPTH = 256

/** The catalog's code (src/errors.ts) of each refusal status below. */
export const BODY_ERROR_CODES = { 400: 'INPUT_INVALID', 413: 'BODY_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' } as const satisfies Record<
  400 | 413 | 415,
  ErrorCode
>

export type BodyResult = { ok: true; body: unknown } | { ok: false; status: 400 | 413 | 415; error: string }

/** A read body: the parsed value, the bytes as received (hmac signs them) and the type it was read as. */
export type RequestBody = { ok: true; body: unknown; bytes: Uint8Array; type: BodyType | null } | { ok: false; status: 400 | 413 | 415; error: string }

export type BytesResult = { ok: true; bytes: Uint8Array } | { ok: false; status: 413; error: string }

/** `text/plain; charset=utf-8` → `text/plain` (lower case); '' when there is none. */
export function mediaTypeOf(header: string | null): string {
  if (!header) return ''
  const semicolon = header.indexOf(';')
  return (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase()
}

/** Which accepted body type a Content-Type is, or null when it is none of them. */
function bodyTypeOf(header: string | null, accept: readonly BodyType[]): BodyType | null {
  // The common case first: JSON.
  if (accept.includes('json') && isJsonContentType(header)) return 'json'
  const media = mediaTypeOf(header)
  if (media === 'application/x-www-form-urlencoded' && accept.includes('form')) return 'form'
  if (media === 'text/plain' && accept.includes('text')) return 'text'
  return null
}

// Stateless between calls (no `stream` option), so one decoder serves every request.
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Reads the body's bytes within the limit. `nodeRequest` is the Node request behind `request`
 * when there is one (`event.runtime?.node?.req`); without it (in-process `app.fetch`) the web body
 * is read.
 */
export async function readBodyBytes(request: Request, limitBytes: number, nodeRequest?: IncomingMessage): Promise<BytesResult> {
  const tooLarge = { ok: false, status: 413, error: `body exceeds ${limitBytes} bytes` } as const
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limitBytes) return tooLarge
  const bytes = nodeRequest ? await readNodeLimited(nodeRequest, limitBytes) : await readLimited(request, limitBytes)
  return bytes === null ? tooLarge : { ok: true, bytes }
}

/**
 * Parses read bytes by their Content-Type, which must be one of `accept` (else 415): JSON, a form
 * (fields as text, a repeated key as an array) or text. An empty body is undefined, whatever its type.
 */
export function parseBody(bytes: Uint8Array, contentType: string | null, accept: readonly BodyType[]): RequestBody {
  if (bytes.length === 0) return { ok: true, body: undefined, bytes, type: null }
  const type = bodyTypeOf(contentType, accept)
  if (type === null) return { ok: false, status: 415, error: `unsupported content type ${mediaTypeOf(contentType) || '(none)'}` }
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return { ok: false, status: 400, error: type === 'json' ? 'body: is not valid JSON' : 'body: is not valid UTF-8 text' }
  }
  if (type === 'text') return { ok: true, body: text, bytes, type }
  if (type === 'form') return { ok: true, body: parseFormText(text), bytes, type }
  const parsed = parseJsonText(text)
  return parsed.ok ? { ok: true, body: parsed.body, bytes, type } : parsed
}

/** Reads and parses in one go (the Run API reads the bytes first only for hmac flows). */
export async function readRequestBody(request: Request, limitBytes: number, accept: readonly BodyType[], nodeRequest?: IncomingMessage): Promise<RequestBody> {
  const read = await readBodyBytes(request, limitBytes, nodeRequest)
  if (!read.ok) return read
  return parseBody(read.bytes, request.headers.get('content-type'), accept)
}

/** JSON bodies only: `readRequestBody` with `accept: [json]`, without the bytes. */
export async function readJsonBody(request: Request, limitBytes: number, nodeRequest?: IncomingMessage): Promise<BodyResult> {
  const read = await readRequestBody(request, limitBytes, JSON_ONLY, nodeRequest)
  return read.ok ? { ok: true, body: read.body } : read
}

const JSON_ONLY: readonly BodyType[] = ['json']

/** `a=1&b=x&b=y` → `{ a: '1', b: ['x', 'y'] }`; keys that could pollute prototypes are dropped. */
export function parseFormText(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {}
  for (const [name, value] of new URLSearchParams(text)) {
    if (name === '__proto__' || name === 'constructor' || name === 'prototype') continue
    const previous = Object.hasOwn(fields, name) ? fields[name]! : undefined
    if (previous === undefined) fields[name] = value
    else if (Array.isArray(previous)) previous.push(value)
    else fields[name] = [previous, value]
  }
  return fields
}

/** Parses JSON text with the depth bound and the prototype-key filter. */
export function parseJsonText(text: string): BodyResult {
  // Deeper than the bound takes more opening brackets than a shorter text holds.
  if (text.length > MAX_JSON_DEPTH && nestingDepth(text) > MAX_JSON_DEPTH) {
    return { ok: false, status: 400, error: `body: is nested more than ${MAX_JSON_DEPTH} levels deep` }
  }
  try {
    const body: unknown = mayHoldDangerousKey(text) ? JSON.parse(text, dropDangerousKeys) : JSON.parse(text)
    markParsedJson(body, text)
    return { ok: true, body }
  } catch (error) {
    if (error instanceof RangeError) return { ok: false, status: 400, error: `body: is nested too deeply` }
    return { ok: false, status: 400, error: 'body: is not valid JSON' }
  }
}

/**
 * Whether the text could hold a `__proto__` or `constructor` key: spelled out, or written with
 * `\u` escapes (the only JSON escapes that yield letters or `_`). Other texts skip the reviver.
 */
function mayHoldDangerousKey(text: string): boolean {
  return text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')
}

function dropDangerousKeys(key: string, value: unknown): unknown {
  return key === '__proto__' || key === 'constructor' ? undefined : value
}

/** Deepest bracket nesting outside strings, in one pass (stops counting once past the bound). */
export function nestingDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123 /* [ { */) {
      depth++
      if (depth > max) max = depth
      if (max > MAX_JSON_DEPTH) return max
    } else if (c === 93 || c === 125 /* ] } */) depth--
  }
  return max
}

/**
 * The client went away before its body ended: nothing to answer and nothing wrong with the server,
 * so app.ts answers 400 without logging an error (never a 500).
 */
export class ClientClosedRequest extends Error {
  constructor(cause?: unknown) {
    super('the client closed the request before its body ended', { cause })
    this.name = 'ClientClosedRequest'
  }
}

/** The body's bytes, or null as soon as more than `limit` bytes arrive. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    let read: ReadableStreamReadResult<Uint8Array>
    try {
      read = await reader.read()
    } catch (error) {
      throw new ClientClosedRequest(error)
    }
    const { done, value } = read
    if (done) break
    total += value.byteLength
    if (total > limit) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/**
 * The Node request's bytes, or null as soon as more than `limit` bytes arrive. Rejects when the
 * client goes away mid-body.
 */
function readNodeLimited(request: IncomingMessage, limit: number): Promise<Uint8Array | null> {
  const method = request.method
  if (method === 'GET' || method === 'HEAD') return Promise.resolve(new Uint8Array(0))
  if (request.readableEnded) return Promise.resolve(new Uint8Array(0))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let total = 0
    const cleanup = () => {
      request.off('data', onData)
      request.off('end', onEnd)
      request.off('error', onError)
      request.off('close', onClose)
    }
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength
      if (total > limit) {
        cleanup()
        // The rest is read and dropped (as Node does with bodies nobody reads), so the 413 reaches
        // the client and the connection stays usable.
        request.resume()
        resolve(null)
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total))
    }
    const onError = (error: Error) => {
      cleanup()
      reject(new ClientClosedRequest(error))
    }
    const onClose = () => {
      cleanup()
      reject(new ClientClosedRequest(request.errored))
    }
    request.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose)
  })
}

/** The body as text (form posts of the pages), or null when larger than `limitBytes` or not UTF-8. */
export async function readRequestText(event: { req: Request; runtime?: { node?: { req?: unknown } } }, limitBytes: number): Promise<string | null> {
  const declared = event.req.headers.get('content-length')
  if (declared !== null && Number(declared) > limitBytes) return null
  const nodeRequest = event.runtime?.node?.req as IncomingMessage | undefined
  const bytes = nodeRequest ? await readNodeLimited(nodeRequest, limitBytes) : await readLimited(event.req, limitBytes)
  if (bytes === null) return null
  try {
    return bytes.length === 0 ? '' : utf8.decode(bytes)
  } catch {
    return null
  }
}
