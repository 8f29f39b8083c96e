// Reading a JSON request body safely: a size limit checked on Content-Length and on the bytes
// actually streamed, JSON content types only, nesting depth bounded before parsing, and keys that
// could pollute prototypes (`__proto__`, `constructor`) dropped.

export const MAX_JSON_DEPTH = 256

export type BodyResult = { ok: true; body: unknown } | { ok: false; status: 400 | 413; error: string }

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i

export function isJsonContentType(header: string | null): boolean {
  if (!header) return false
  const mediaType = header.split(';')[0]!.trim()
  return JSON_TYPE.test(mediaType)
}

/** Reads the body (undefined when empty) and parses it as JSON. */
export async function readJsonBody(request: Request, limitBytes: number): Promise<BodyResult> {
  const tooLarge: BodyResult = { ok: false, status: 413, error: `body exceeds ${limitBytes} bytes` }
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limitBytes) return tooLarge
  const bytes = await readLimited(request, limitBytes)
  if (bytes === null) return tooLarge
  if (bytes.length === 0) return { ok: true, body: undefined }
  if (!isJsonContentType(request.headers.get('content-type'))) {
    return { ok: false, status: 400, error: 'body: must be JSON (Content-Type: application/json)' }
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return { ok: false, status: 400, error: 'body: is not valid JSON' }
  }
  return parseJsonText(text)
}

/** Parses JSON text with the depth bound and the prototype-key filter. */
export function parseJsonText(text: string): BodyResult {
  if (nestingDepth(text) > MAX_JSON_DEPTH) {
    return { ok: false, status: 400, error: `body: is nested more than ${MAX_JSON_DEPTH} levels deep` }
  }
  try {
    return { ok: true, body: JSON.parse(text, dropDangerousKeys) }
  } catch (error) {
    if (error instanceof RangeError) return { ok: false, status: 400, error: `body: is nested too deeply` }
    return { ok: false, status: 400, error: 'body: is not valid JSON' }
  }
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

/** The body's bytes, or null as soon as more than `limit` bytes arrive. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
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
