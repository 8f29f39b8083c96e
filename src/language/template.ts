// Templates in string settings: `{{ root.a.b }}` references, `{{= expression }}` JSONata expressions
// and `${secrets.NAME}`. Parsed once per flow version; references never evaluate code, and
// expressions are evaluated only by JSONata, bounded (src/language/expression.ts).

export interface Reference {
  kind: 'ref'
  /** The text between the braces, trimmed: `start.qty`. */
  source: string
  /** Path segments; path[0] is the root (a node's reference name, or `run`). */
  path: string[]
}

export interface ExpressionPart {
  kind: 'expr'
  /** The JSONata text between `{{=` and `}}`, trimmed. */
  source: string
  /** Index of `source` in the template text, so load problems point into the expression. */
  offset: number
}

interface SecretReference {
  kind: 'secret'
  name: string
}

type TemplatePart = string | Reference | ExpressionPart | SecretReference

export interface ParsedTemplate {
  parts: TemplatePart[]
  /** Set when the whole string is exactly one `{{ ref }}` or `{{= expr }}`: the value keeps its type. */
  whole: Reference | ExpressionPart | null
  /** The expressions among the parts (empty for most strings): they are evaluated before the node runs. */
  expressions: ExpressionPart[]
}

const TOKEN = /\{\{(=?)|\$\{secrets\.([A-Za-z0-9_]+)\}/g
const REFERENCE = /\{\{\s*([^{}]*?)\s*\}\}/y
const SEGMENT = /^[A-Za-z0-9_-]+$/

/** Splits a string into literal text, references, expressions and secret references. Throws on a malformed one. */
export function parseTemplate(text: string): ParsedTemplate {
  const parts: TemplatePart[] = []
  const expressions: ExpressionPart[] = []
  let last = 0
  TOKEN.lastIndex = 0
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const index = match.index
    if (index > last) parts.push(text.slice(last, index))
    if (match[2] !== undefined) {
      parts.push({ kind: 'secret', name: match[2] })
      last = index + match[0].length
    } else if (match[1] === '=') {
      const bodyStart = index + 3
      const end = expressionEnd(text, bodyStart)
      if (end < 0)
        throw new TemplateSyntaxError(`"${text.slice(index, index + 40)}" has no closing "}}"; write an expression like {{= $sum(start.items.price) }}`)
      const raw = text.slice(bodyStart, end)
      const source = raw.trim()
      if (source === '') throw new TemplateSyntaxError('"{{= }}" is empty; write an expression like {{= start.qty * 2 }}')
      const part: ExpressionPart = { kind: 'expr', source, offset: bodyStart + (raw.length - raw.trimStart().length) }
      parts.push(part)
      expressions.push(part)
      last = end + 2
    } else {
      REFERENCE.lastIndex = index
      const reference = REFERENCE.exec(text)
      if (!reference) {
        // A `{{` that does not open a reference is literal text, as it always was.
        parts.push('{{')
        last = index + 2
        TOKEN.lastIndex = last
        continue
      }
      const source = reference[1] ?? ''
      const path = source.split('.')
      if (source === '' || !path.every((segment) => SEGMENT.test(segment))) {
        throw new TemplateSyntaxError(`"{{ ${source} }}" is not a valid reference; write it like {{ start.name }}, or {{= ... }} for an expression`)
      }
      parts.push({ kind: 'ref', source, path })
      last = index + reference[0].length
    }
    TOKEN.lastIndex = last
  }
  if (last < text.length) parts.push(text.slice(last))
  const only = parts.length === 1 ? parts[0] : undefined
  const whole = typeof only === 'object' && only.kind !== 'secret' ? only : null
  return { parts, whole, expressions }
}

/**
 * Where the `}}` closing an expression starts: braces, brackets and parentheses inside the
 * expression nest, and quoted strings and comments are skipped, so `{{= {"a": {"b": 1}} }}` works.
 */
function expressionEnd(text: string, from: number): number {
  let depth = 0
  for (let i = from; i < text.length; i++) {
    const c = text[i]
    if (c === '"' || c === "'" || c === '`') {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2)
      if (close < 0) return -1
      i = close + 1
    } else if (c === '{' || c === '[' || c === '(') {
      depth++
    } else if (c === '}' && depth === 0 && text[i + 1] === '}') {
      return i
    } else if (c === '}' || c === ']' || c === ')') {
      depth = Math.max(0, depth - 1)
    }
  }
  return -1
}

export class TemplateSyntaxError extends Error {}

/** True when the string contains anything a template would replace. */
export function hasTemplate(text: string): boolean {
  return text.includes('{{') || text.includes('${secrets.')
}
