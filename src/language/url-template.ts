// The http node's url: values placed by `{{ }}` and `{{= }}` are encoded for where they land, so a
// caller's value stays one value. Literal text and `${secrets.X}` are the flow author's and are kept.
import type { ResolvedPart } from './resolve.js'
import { textOf } from './resolve.js'

/** Text up to here holds a whole scheme and host (`https://api.example.com/`): values may follow. */
export const ORIGIN_DONE = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*[/?#]/i

/** Its message completes "HTTP GET request ...". */
export class UrlTemplateError extends Error {}

/**
 * The URL from resolved url parts. A url that is exactly one value is taken as the whole URL (the flow
 * author chose that; `validate` warns that nothing in it is encoded); it must be an absolute http(s)
 * URL. Otherwise a value may not sit in the scheme, host or port, and is percent-encoded in the path
 * (no `/`), the query (no `&`, `=` or `#`) and the fragment. A path segment that holds a value may not
 * end up `.` or `..`, whether the value is the whole segment or joins the text beside it
 * (`{{a}}.{{b}}` with a = "." and b = ""): the URL parser would resolve it away and call another path.
 */
export function buildUrl(parts: ResolvedPart[]): URL {
  const only = parts.length === 1 ? parts[0] : undefined
  if (only && 'value' in only) return parseHttpUrl(textOf(only.value))
  let built = ''
  let origin: string | null = null
  // Where values landed in the path (encoded, so each lies inside one segment).
  const spans: ValueSpan[] = []
  for (const part of parts) {
    if ('literal' in part) {
      built += part.literal
      continue
    }
    if (!ORIGIN_DONE.test(built)) {
      throw new UrlTemplateError(
        'has a {{ }} value in the scheme, host or port of its url, which is not allowed; write the base URL in the flow file (or a ${secrets.X})',
      )
    }
    origin ??= built
    const text = textOf(part.value)
    // A lone surrogate (caller input) cannot be percent-encoded: it becomes U+FFFD, as fetch would send it.
    const encoded = encodeURIComponent(toWellFormed(text))
    if (!built.includes('?') && !built.includes('#')) spans.push({ from: built.length, to: built.length + encoded.length, text })
    built += encoded
  }
  checkDotSegments(built, spans)
  const url = parseHttpUrl(built)
  // Belt and braces: values were encoded, so the origin must be the one the literal text gave.
  if (origin !== null && url.origin !== new URL(origin).origin) throw new UrlTemplateError('has a url whose host a value changed')
  return url
}

interface ValueSpan {
  from: number
  to: number
  text: string
}

/** `.`, `..` and their percent-encoded forms (`%2e`, `.%2E`), as the WHATWG URL parser reads them. */
function isDotSegment(segment: string): boolean {
  const plain = segment.length <= 6 ? segment.replace(/%2e/gi, '.') : segment
  return plain === '.' || plain === '..'
}

/** Fails when a path segment that a value is part of is a dot segment (the finished segment is checked). */
function checkDotSegments(built: string, spans: ValueSpan[]): void {
  for (const { from, to, text } of spans) {
    const start = built.lastIndexOf('/', from - 1) + 1
    const endAt = built.slice(to).search(/[/?#]/)
    const segment = built.slice(start, endAt < 0 ? built.length : to + endAt)
    if (!isDotSegment(segment)) continue
    if (segment === text) throw new UrlTemplateError(`has the value "${text}" as a segment of its url path, which is not allowed`)
    throw new UrlTemplateError(`has the segment "${segment}" in its url path, formed with a {{ }} value, which is not allowed`)
  }
}

function parseHttpUrl(text: string): URL {
  if (!URL.canParse(text)) throw new UrlTemplateError(`has an invalid URL "${text}"`)
  const url = new URL(text)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlTemplateError(`has the URL "${text}"; only http and https URLs can be called`)
  return url
}

/** Appends a `query` map: each value URL-encoded by URLSearchParams; lists repeat the key; null is left out. */
export function appendQuery(url: URL, query: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null || item === undefined) continue
      url.searchParams.append(key, textOf(item))
    }
  }
}

/** `String.prototype.toWellFormed` (Node 20+): lone surrogates replaced by U+FFFD. */
function toWellFormed(text: string): string {
  return (text as string & { toWellFormed(): string }).toWellFormed()
}
