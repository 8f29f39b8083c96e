// Schema `pattern`s are written by the flow's author but run on every caller's input, before the
// run timeout applies. A backtracking engine lets one request freeze the server (`^(a+)+$` against
// 'a'*32+'!' took 15.7 s), so patterns are matched by re2js, a pure-JS port of RE2 that runs in
// linear time. Patterns RE2 cannot express (lookaround, backreferences) fall back to RegExp; for
// those, a pattern safe-regex2 flags as catastrophic is a load error (the Start's kind, through check-context.ts).
import { createRequire } from 'node:module'
import { isRecord } from '../internal/is-record.js'

const require = createRequire(import.meta.url)
type Re2 = typeof import('re2js')
type SafeRegex = (pattern: string) => boolean
let re2: Re2 | undefined
let safeRegex: SafeRegex | undefined
const loadRe2 = (): Re2 => (re2 ??= require('re2js') as Re2)
const loadSafeRegex = (): SafeRegex => (safeRegex ??= require('safe-regex2') as SafeRegex)

interface RegExpLike {
  test(text: string): boolean
  toString(): string
}

/** The RE2 version of a pattern, or null when RE2 cannot express it. */
function linearRegExp(pattern: string): RegExpLike | null {
  try {
    return loadRe2().RE2JS.compile(pattern)
  } catch {
    return null
  }
}

/**
 * ajv's `code.regExp` engine: linear-time matching where RE2 can express the pattern, RegExp
 * otherwise (its `u` flag kept, and a bad pattern still throws as ajv expects).
 */
export const patternEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    const linear = linearRegExp(pattern)
    if (!linear) return new RegExp(pattern, flags)
    // ajv keys compiled patterns by toString(): keep it distinct from a RegExp's.
    return { test: (text: string) => linear.test(text), toString: () => `re2:${pattern}` }
  },
  { code: 'flowctl.patternEngine' },
)

export type PatternVerdict = { ok: true } | { ok: false; severity: 'error' | 'warning'; message: string }

/** Whether a pattern can make matching take exponential time, and what that means here. */
export function checkPattern(pattern: string): PatternVerdict {
  if (loadSafeRegex()(pattern)) return { ok: true }
  if (linearRegExp(pattern)) {
    return {
      ok: false,
      severity: 'warning',
      message: `the pattern ${JSON.stringify(pattern)} can backtrack catastrophically (nested or overlapping repetition); flowctl matches it in linear time, but clients that validate with the OpenAPI document may hang on it; simplify it, e.g. (a+)+ to a+`,
    }
  }
  return {
    ok: false,
    severity: 'error',
    message: `the pattern ${JSON.stringify(pattern)} can backtrack catastrophically (nested or overlapping repetition) and uses lookaround or backreferences, which cannot be matched in linear time: one request could freeze the server; simplify it, e.g. (a+)+ to a+`,
  }
}

/** Every `pattern` value and `patternProperties` key inside a schema, with its path. */
export function schemaPatterns(schema: unknown, path: (string | number)[] = []): { path: (string | number)[]; pattern: string }[] {
  const found: { path: (string | number)[]; pattern: string }[] = []
  const walk = (value: unknown, at: (string | number)[]) => {
    if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, [...at, i]))
      return
    }
    if (value === null || typeof value !== 'object') return
    for (const [key, child] of Object.entries(value)) {
      if (key === 'pattern' && typeof child === 'string') found.push({ path: [...at, key], pattern: child })
      else if (key === 'patternProperties' && isRecord(child)) {
        for (const name of Object.keys(child)) found.push({ path: [...at, key, name], pattern: name })
      }
      // `enum`, `const`, `default` and `examples` hold data, not schemas.
      if (key !== 'enum' && key !== 'const' && key !== 'default' && key !== 'examples') walk(child, [...at, key])
    }
  }
  walk(schema, path)
  return found
}
