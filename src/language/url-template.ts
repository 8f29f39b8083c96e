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
 * author chose that); otherwise a value may not sit in the scheme, host or port, and is percent-encoded
 * in the path (no `/`, and never a whole `.` or `..` segment), the query (no `&`, `=` or `#`) and the fragment.
 */
export function buildUrl(parts: ResolvedPart[]): URL {
  const only = parts.length === 1 ? parts[0] : undefined
  if (only && 'value' in only) return parseHttpUrl(textOf(only.value))
  let built = ''
  let origin: string | null = null
  // Dot values placed in the path: a whole `.` or `..` segment would be resolved away by the URL parser.
  const dots: { from: number; to: number; text: string }[] = []
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
    const inPath = !built.includes('?') && !built.includes('#')
    if (inPath && (text === '.' || text === '..')) dots.push({ from: built.length, to: built.length + text.length, text })
    // A lone surrogate (caller input) cannot be percent-encoded: it becomes U+FFFD, as fetch would send it.
    built += encodeURIComponent(toWellFormed(text))
  }
  for (const { from, to, text } of dots) {
    if (built[from - 1] === '/' && (to === built.length || '/?#'.includes(built[to] ?? ''))) {
      throw new UrlTemplateError(`has the value "${text}" as a segment of its url path, which is not allowed`)
    }
  }
  const url = parseHttpUrl(built)
  // Belt and braces: values were encoded, so the origin must be the one the literal text gave.
  if (origin !== null && url.origin !== new URL(origin).origin) throw new UrlTemplateError('has a url whose host a value changed')
  return url
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
