// Templates in string settings: `{{ root.a.b }}` references and `${secrets.NAME}`.
// Parsed once per flow version; no code is ever evaluated.

export interface Reference {
  kind: 'ref'
  /** The text between the braces, trimmed: `start.qty`. */
  source: string
  /** Path segments; path[0] is the root (a node's reference name, or `run`). */
  path: string[]
}

export interface SecretReference {
  kind: 'secret'
  name: string
}

export type TemplatePart = string | Reference | SecretReference

export interface ParsedTemplate {
  parts: TemplatePart[]
  /** Set when the whole string is exactly one `{{ ref }}`: the value keeps its type. */
  whole: Reference | null
}

const TOKEN = /\{\{\s*([^{}]*?)\s*\}\}|\$\{secrets\.([A-Za-z0-9_]+)\}/g
const SEGMENT = /^[A-Za-z0-9_-]+$/

/** Splits a string into literal text, references and secret references. Throws on a malformed reference. */
export function parseTemplate(text: string): ParsedTemplate {
  const parts: TemplatePart[] = []
  let last = 0
  for (const match of text.matchAll(TOKEN)) {
    const index = match.index ?? 0
    if (index > last) parts.push(text.slice(last, index))
    if (match[2] !== undefined) {
      parts.push({ kind: 'secret', name: match[2] })
    } else {
      const source = match[1] ?? ''
      const path = source.split('.')
      if (source === '' || !path.every((segment) => SEGMENT.test(segment))) {
        throw new TemplateSyntaxError(`"{{ ${source} }}" is not a valid reference; write it like {{ start.name }}`)
      }
      parts.push({ kind: 'ref', source, path })
    }
    last = index + match[0].length
  }
  if (last < text.length) parts.push(text.slice(last))
  const only = parts.length === 1 ? parts[0] : undefined
  const whole = typeof only === 'object' && only.kind === 'ref' ? only : null
  return { parts, whole }
}

export class TemplateSyntaxError extends Error {}

/** True when the string contains anything a template would replace. */
export function hasTemplate(text: string): boolean {
  TOKEN.lastIndex = 0
  return text.includes('{{') || text.includes('${secrets.')
}

/** Every reference and secret in a setting value (strings inside objects and arrays included). */
export function collectTemplateParts(value: unknown, into: TemplatePart[] = []): TemplatePart[] {
  if (typeof value === 'string') {
    if (hasTemplate(value)) into.push(...parseTemplate(value).parts.filter((p) => typeof p !== 'string'))
  } else if (Array.isArray(value)) {
    for (const item of value) collectTemplateParts(item, into)
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) collectTemplateParts(item, into)
  }
  return into
}
