// Conditions of If nodes: plain data (`{ left, op, right }`, `all`, `any`, `not`), never code.
// Operands are resolved through the caller's `resolve`, so `{{ refs }}` keep their types.
import { compareText } from '../internal/compare.js'
import { isRecord } from '../internal/is-record.js'

type ConditionOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains' | 'startsWith' | 'endsWith' | 'in' | 'exists' | 'empty'

const CONDITION_OPS: readonly ConditionOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'startsWith', 'endsWith', 'in', 'exists', 'empty']

type Resolve = (value: unknown) => unknown

/** Evaluates a condition; throws (failing the node) on a condition that is not one of the known shapes. */
export function evaluateCondition(condition: unknown, resolve: Resolve): boolean {
  if (!isRecord(condition)) throw new Error('condition must be an object')
  if ('all' in condition) return listOf(condition.all, 'all').every((c) => evaluateCondition(c, resolve))
  if ('any' in condition) return listOf(condition.any, 'any').some((c) => evaluateCondition(c, resolve))
  if ('not' in condition) return !evaluateCondition(condition.not, resolve)
  const op = condition.op
  if (typeof op !== 'string' || !(CONDITION_OPS as readonly string[]).includes(op)) {
    throw new Error(`unknown condition operator "${String(op)}"; use one of ${CONDITION_OPS.join(', ')}`)
  }
  const left = resolve(condition.left)
  // `exists` and `empty` are unary: `right` is not needed (and not resolved).
  if (op === 'exists') return left !== null && left !== undefined
  if (op === 'empty') return isEmpty(left)
  return compareWith(op as ConditionOp, left, resolve(condition.right))
}

function compareWith(op: ConditionOp, left: unknown, right: unknown): boolean {
  switch (op) {
    case 'eq':
      return valuesEqual(left, right)
    case 'ne':
      return !valuesEqual(left, right)
    case 'gt':
      return order(left, right, (d) => d > 0)
    case 'gte':
      return order(left, right, (d) => d >= 0)
    case 'lt':
      return order(left, right, (d) => d < 0)
    case 'lte':
      return order(left, right, (d) => d <= 0)
    case 'contains':
      return contains(left, right)
    case 'in':
      return contains(right, left)
    case 'startsWith':
      return isText(left) && String(left).startsWith(textOf(right))
    case 'endsWith':
      return isText(left) && String(left).endsWith(textOf(right))
    default:
      return false
  }
}

/**
 * Deep equality. A number and a numeric string are equal (`5` eq `"5"`): path, query and text
 * templates produce strings, and flow authors compare them with numbers written in YAML.
 * null and undefined are equal (a missing field resolves to null).
 */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null)
  if (typeof a === 'number' && typeof b === 'string') return numberOf(b) === a
  if (typeof a === 'string' && typeof b === 'number') return numberOf(a) === b
  if (typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((item, i) => valuesEqual(item, b[i]))
  }
  const aKeys = Object.keys(a)
  const bRecord = b as Record<string, unknown>
  if (aKeys.length !== Object.keys(b).length) return false
  return aKeys.every((key) => Object.hasOwn(bRecord, key) && valuesEqual((a as Record<string, unknown>)[key], bRecord[key]))
}

/** Orders numbers (numeric strings count as numbers when the other side is a number) and strings. */
function order(left: unknown, right: unknown, test: (difference: number) => boolean): boolean {
  if (typeof left === 'number' || typeof right === 'number') {
    const l = typeof left === 'number' ? left : numberOf(left)
    const r = typeof right === 'number' ? right : numberOf(right)
    return l !== null && r !== null && !Number.isNaN(l) && !Number.isNaN(r) && test(l - r)
  }
  if (typeof left === 'string' && typeof right === 'string') return test(compareText(left, right))
  return false
}

/** `container` holds `item`: an element of an array (deep equality) or a substring of a string. */
function contains(container: unknown, item: unknown): boolean {
  if (Array.isArray(container)) return container.some((element) => valuesEqual(element, item))
  if (typeof container === 'string' && item !== null && item !== undefined && typeof item !== 'object') {
    return container.includes(String(item))
  }
  return false
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true
  if (Array.isArray(value)) return value.length === 0
  return isRecord(value) && Object.keys(value).length === 0
}

/** The number a value stands for: numbers themselves and numeric strings (`" 42 "`, `"1e3"`), else null. */
function numberOf(value: unknown): number | null {
  if (typeof value === 'number') return value
  if (typeof value !== 'string' || value.trim() === '') return null
  const number = Number(value)
  return Number.isFinite(number) ? number : null
}

function textOf(value: unknown): string {
  return value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value)
}

/** Strings, and numbers read as their text (`12345` startsWith `"12"`). */
function isText(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number'
}

function listOf(value: unknown, name: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`"${name}" of a condition must be a list of conditions`)
  return value
}
