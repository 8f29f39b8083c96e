// Partial deep matching (objects: the expected fields, extra ones are fine; lists: item by item, same
// length; anything else: equal) and a readable diff of what did not match.
import { createRequire } from 'node:module'
import { stringify } from 'yaml'
import { isRecord } from '../internal/is-record.js'

// jsdiff is needed only when a case fails: required then, not on every `flowctl test` start.
const require = createRequire(import.meta.url)
const loadDiff = () => require('diff') as typeof import('diff')

export interface Mismatch {
  /** Where, as a dotted path from the checked value: `body.items.0.sku`. */
  path: string
  message: string
}

const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key))

/** Every place where `actual` does not match `expected`; empty when it matches. */
export function partialMatch(expected: unknown, actual: unknown, path: string): Mismatch[] {
  if (isRecord(expected)) {
    if (!isRecord(actual)) return [{ path, message: `expected a mapping, got ${describe(actual)}` }]
    return Object.entries(expected).flatMap(([key, value]) =>
      key in actual ? partialMatch(value, actual[key], join(path, key)) : [{ path: join(path, key), message: `missing (expected ${describe(value)})` }],
    )
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [{ path, message: `expected a list, got ${describe(actual)}` }]
    const problems = expected.flatMap((item, index) =>
      index < actual.length
        ? partialMatch(item, actual[index], join(path, index))
        : [{ path: join(path, index), message: `missing (expected ${describe(item)})` }],
    )
    if (actual.length > expected.length) problems.push({ path, message: `expected ${expected.length} items, got ${actual.length}` })
    return problems
  }
  if (Object.is(expected, actual) || (expected === 0 && actual === 0)) return []
  return [{ path, message: `expected ${describe(expected)}, got ${describe(actual)}` }]
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `a list of ${value.length}`
  if (isRecord(value)) return 'a mapping'
  return JSON.stringify(value)
}

/** `actual` cut down to the fields `expected` names (so the diff shows only what was checked). */
export function shapeLike(expected: unknown, actual: unknown): unknown {
  if (isRecord(expected) && isRecord(actual)) {
    const shaped: Record<string, unknown> = {}
    for (const key of Object.keys(expected)) if (key in actual) shaped[key] = shapeLike(expected[key], actual[key])
    return shaped
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    return actual.map((item, index) => (index < expected.length ? shapeLike(expected[index], item) : item))
  }
  return actual
}

/** YAML, like the test files: no commas or brackets to differ on lines whose values are equal. */
function toText(value: unknown): string {
  return value === undefined ? '(nothing)\n' : stringify(value, { lineWidth: 0 })
}

/**
 * A unified diff of expected against what the run gave (cut to the expected shape): lines starting
 * with `- ` are expected, `+ ` received, two spaces context. Empty when both print the same.
 */
export function diffLines(expected: unknown, actual: unknown): string[] {
  const patch = loadDiff().structuredPatch('expected', 'received', toText(expected), toText(shapeLike(expected, actual)), '', '', { context: 3 })
  const lines: string[] = []
  for (const [index, hunk] of patch.hunks.entries()) {
    if (index > 0) lines.push('  …')
    for (const line of hunk.lines) {
      if (line.startsWith('\\')) continue
      lines.push(`${line[0] === ' ' ? ' ' : line[0]} ${line.slice(1)}`)
    }
  }
  return lines
}
