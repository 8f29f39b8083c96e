// Where an expression runs (SPEC §18: its bounds are preemptive). In this thread, a budget can only be
// checked between evaluation steps, so it cannot stop a built-in that runs as one long step
// (`$sort` of a caller's list, `$distinct`, `$replace` into a huge text). A worker thread can be
// stopped at any moment. But a trip to a worker costs ~6× a small evaluation (docs/performance.md),
// so an evaluation stays in this thread when nothing in it can run long:
// - the expression (decided once, at compile time) uses only paths, operators, literals, conditions,
//   blocks, object and array constructors and built-ins that take time in proportion to their
//   arguments and build nothing much larger (INLINE_BUILTINS): no function definitions (so no
//   recursion), no higher-order built-ins, no ranges, no sorting, no `$replace`, no `$split` (a
//   text of n characters can become n items);
// - and the data it reads is small (SMALL_INPUT, measured per evaluation with an early exit), so
//   every step is short and the step budget's count is close to the real time.
// Everything else is evaluated by an expression worker under a deadline and a heap limit.
import { CONCAT_FUNCTION, type AstNode } from './expression-core.js'

/** Built-ins whose cost grows with their arguments' size and whose result is no larger than them. */
const INLINE_BUILTINS = new Set([
  'sum',
  'count',
  'max',
  'min',
  'average',
  'string',
  'substring',
  'substringBefore',
  'substringAfter',
  'lowercase',
  'uppercase',
  'length',
  'trim',
  'pad',
  'contains',
  'join',
  'number',
  'floor',
  'ceil',
  'round',
  'abs',
  'sqrt',
  'power',
  'random',
  'boolean',
  'not',
  'exists',
  'keys',
  'lookup',
  'append',
  'spread',
  'merge',
  'reverse',
  'type',
  'error',
  'assert',
  'now',
  'millis',
  'toMillis',
  'fromMillis',
  'formatNumber',
  'formatBase',
  'formatInteger',
  'parseInteger',
  'base64encode',
  'base64decode',
  'encodeUrlComponent',
  'encodeUrl',
  'decodeUrlComponent',
  'decodeUrl',
  CONCAT_FUNCTION,
])

/** Every built-in jsonata binds (2.x), allowed inline or not. */
const BUILTINS = new Set([
  ...INLINE_BUILTINS,
  'match',
  'replace',
  'map',
  'zip',
  'filter',
  'single',
  'reduce',
  'sift',
  'each',
  'sort',
  'shuffle',
  'distinct',
  'eval',
  'clone',
])

/** Node types that never run long by themselves. */
const INLINE_TYPES = new Set([
  'path',
  'name',
  'string',
  'number',
  'value',
  'binary',
  'unary',
  'condition',
  'block',
  'bind',
  'variable',
  'wildcard',
  'descendant',
  'parent',
  'function',
  'filter',
])

/** What an inline evaluation may read: at most this many values, and this many characters of text. */
const SMALL_INPUT = { values: 10_000, chars: 256 * 1024 }

/** Which roots an inline-able expression reads (null: it reads the whole input through `$`/`$$`). */
export type InlineRoots = readonly string[] | null

/**
 * The roots to measure if the expression may run in this thread, or false when it must always run in
 * a worker. Walks the compiled AST (after ranges and joins were rewritten into function calls).
 */
export function inlineRootsOf(ast: AstNode): InlineRoots | false {
  const roots = new Set<string>()
  let wholeInput = false
  const visit = (node: AstNode | undefined, atRoot: boolean): boolean => {
    if (!node || typeof node !== 'object') return true
    if (!INLINE_TYPES.has(node.type) || node.terms) return false
    if (node.type === 'function') {
      const procedure = node.procedure as AstNode | undefined
      if (procedure?.type !== 'variable' || !INLINE_BUILTINS.has(String(procedure.value))) return false
      return (node.arguments as AstNode[] | undefined)?.every((argument) => visit(argument, atRoot)) ?? true
    }
    if (node.type === 'variable' && (node.value === '' || node.value === '$')) wholeInput = true
    // A built-in passed as a value (`$f := $sort`), or a built-in's name bound to something else, could
    // be called under an allowed name.
    if (node.type === 'variable' && BUILTINS.has(String(node.value)) && !INLINE_BUILTINS.has(String(node.value))) return false
    if (node.type === 'bind' && BUILTINS.has(String((node.lhs as AstNode | undefined)?.value))) return false
    if (node.type === 'name' && atRoot) roots.add(String(node.value))
    if (node.type === 'path') {
      const steps = (node.steps ?? []) as AstNode[]
      return steps.every((step, index) => visit(step, atRoot && index === 0)) && extrasInline(node)
    }
    if (Array.isArray(node.lhs)) {
      // An object constructor `{ key: value }`: pairs of expressions.
      if (!(node.lhs as unknown as AstNode[][]).every((pair) => pair.every((item) => visit(item, atRoot)))) return false
    } else if (!visit(node.lhs as AstNode, atRoot)) return false
    const children = [
      node.rhs as AstNode,
      node.condition,
      node.then,
      node.else,
      node.expr,
      (node as { expression?: AstNode }).expression,
      ...((node.expressions ?? []) as AstNode[]),
    ]
    return children.every((child) => visit(child, atRoot)) && extrasInline(node)
  }
  /** Predicates and groups read relative to their step: any root they name is already measured through it. */
  const extrasInline = (node: AstNode): boolean =>
    [...(node.stages ?? []), ...(node.predicate ?? [])].every((stage) => visit(stage.expr, false)) &&
    (node.group?.lhs ?? []).every((pair) => pair.every((item) => visit(item, false)))
  if (!visit(ast, true)) return false
  return wholeInput ? null : [...roots]
}

/** Whether the roots an expression reads are small enough to evaluate in this thread (stops counting early). */
export function isSmallInput(input: Record<string, unknown>, roots: InlineRoots): boolean {
  const budget = { values: SMALL_INPUT.values, chars: SMALL_INPUT.chars }
  if (roots === null) return fits(input, budget)
  for (const root of roots) if (Object.hasOwn(input, root) && !fits(input[root], budget)) return false
  return true
}

function fits(value: unknown, budget: { values: number; chars: number }): boolean {
  if (--budget.values < 0) return false
  if (typeof value === 'string') return (budget.chars -= value.length) >= 0
  if (value === null || typeof value !== 'object') return true
  if (Array.isArray(value)) {
    for (const item of value) if (!fits(item, budget)) return false
    return true
  }
  for (const key in value) {
    if ((budget.chars -= key.length) < 0) return false
    if (!fits((value as Record<string, unknown>)[key], budget)) return false
  }
  return true
}
