// The fast evaluator: the simple shapes most settings use (paths, literals, arithmetic, comparisons,
// `and`/`or`, `&`, a few text built-ins) answered synchronously without JSONata, exactly as JSONata
// would for the values it accepts; for any other value it answers NOT_PLAIN and JSONata evaluates,
// errors included. test/flow/expression.test.ts ("simple expressions answer without JSONata, exactly
// as JSONata would") holds the two to the same answers.
import { boundedConcat, textForJoin, CONCAT_FUNCTION, type AstNode, type ExpressionLimits } from './expression-core.js'

export type FastEvaluator = (input: Record<string, unknown>) => unknown

const ARITHMETIC: Record<string, (a: number, b: number) => number> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '%': (a, b) => a % b,
}
const ORDER: Record<string, (a: number | string, b: number | string) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
}

/** Built-ins the fast evaluator knows, each answering as JSONata does for the values it accepts. */
const FAST_FUNCTIONS: Record<string, (args: unknown[]) => unknown> = {
  uppercase: ([text]) => (typeof text === 'string' ? text.toUpperCase() : text === undefined ? undefined : NOT_PLAIN),
  lowercase: ([text]) => (typeof text === 'string' ? text.toLowerCase() : text === undefined ? undefined : NOT_PLAIN),
  string: ([value]) => (value === undefined ? undefined : textForJoin(value)),
  length: ([text]) => (typeof text === 'string' ? Array.from(text).length : NOT_PLAIN),
}

/** The fast evaluator of a simple expression, or null when any part of it needs JSONata. */
export function fastEvaluator(node: AstNode, limits: Pick<ExpressionLimits, 'textChars' | 'arrayItems'>): FastEvaluator | null {
  if (node.stages || node.predicate || node.group || node.keepArray) return null
  if (node.type === 'path') {
    const path = plainPath(node)
    // A list longer than limits.arrayItems is JSONata's to refuse ("expression result too large").
    return path
      ? (input) => {
          const value = readPlainPath(input, path)
          return Array.isArray(value) && value.length > limits.arrayItems ? NOT_PLAIN : value
        }
      : null
  }
  if (node.type === 'number' || node.type === 'string' || node.type === 'value') {
    const value: unknown = node.value
    return () => value
  }
  if (node.type === 'function' && node.procedure?.type === 'variable' && node.procedure.value === CONCAT_FUNCTION && node.arguments?.length === 2) {
    const [left, right] = (node.arguments as AstNode[]).map((argument) => fastEvaluator(argument, limits))
    if (!left || !right) return null
    return (input) => {
      const a = left(input)
      const b = right(input)
      return a === NOT_PLAIN || b === NOT_PLAIN ? NOT_PLAIN : boundedConcat(a, b, limits.textChars)
    }
  }
  const builtin = node.type === 'function' && node.procedure?.type === 'variable' ? FAST_FUNCTIONS[String(node.procedure.value)] : undefined
  // One argument each: with none, JSONata would use the context value instead.
  if (builtin && node.arguments?.length === 1) {
    const args = ((node.arguments ?? []) as AstNode[]).map((argument) => fastEvaluator(argument, limits))
    if (args.some((arg) => arg === null)) return null
    return (input) => {
      const values = args.map((arg) => (arg as FastEvaluator)(input))
      return values.includes(NOT_PLAIN) ? NOT_PLAIN : builtin(values)
    }
  }
  if (node.type !== 'binary' || typeof node.value !== 'string') return null
  const left = fastEvaluator(node.lhs as AstNode, limits)
  const right = fastEvaluator(node.rhs as AstNode, limits)
  if (!left || !right) return null
  const op = node.value
  const arithmetic = ARITHMETIC[op]
  if (arithmetic) {
    return (input) => {
      const a = left(input)
      const b = right(input)
      if (typeof a !== 'number' || typeof b !== 'number') return NOT_PLAIN
      const result = arithmetic(a, b)
      return Number.isFinite(result) ? result : NOT_PLAIN
    }
  }
  const order = ORDER[op]
  if (order) {
    return (input) => {
      const a = left(input)
      const b = right(input)
      const comparable = (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')
      return comparable ? order(a, b) : NOT_PLAIN
    }
  }
  if (op === '=' || op === '!=') {
    return (input) => {
      const a = left(input)
      const b = right(input)
      const primitive = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
      if (!primitive(a) || !primitive(b)) return NOT_PLAIN
      return op === '=' ? a === b : a !== b
    }
  }
  if (op === 'and' || op === 'or') {
    return (input) => {
      const a = left(input)
      const b = right(input)
      if (typeof a !== 'boolean' || typeof b !== 'boolean') return NOT_PLAIN
      return op === 'and' ? a && b : a || b
    }
  }
  return null
}

/** `a.b.c` with nothing but names: the path's names; anything else (functions, filters, ...): null. */
function plainPath(node: AstNode): string[] | null {
  if (node.type !== 'path' || !Array.isArray(node.steps) || node.keepArray) return null
  const names: string[] = []
  for (const step of node.steps as AstNode[]) {
    if (step.type !== 'name' || typeof step.value !== 'string' || step.stages || step.predicate || step.group || step.keepArray || step.tuple) return null
    names.push(step.value)
  }
  return names
}

/** The fast evaluator's answer when JSONata must evaluate instead. */
export const NOT_PLAIN = Symbol('not plain')

/** A plain path read as JSONata would, when no step meets an array (JSONata maps over arrays): else NOT_PLAIN. */
function readPlainPath(input: Record<string, unknown>, path: string[]): unknown {
  let current: unknown = input
  for (const name of path) {
    if (Array.isArray(current)) return NOT_PLAIN
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, name)) return undefined
    current = (current as Record<string, unknown>)[name]
  }
  // A whole array at the end is fine unless it is empty or holds one item (JSONata unwraps those).
  if (Array.isArray(current) && current.length < 2) return NOT_PLAIN
  return current
}
