// `{{= expression }}`: JSONata, bounded (SPEC §9, §18). The input is the run's scope (upstream outputs
// and `run`), which holds no secrets; JSONata itself reads own properties only and cannot call
// JavaScript it was not given. Where an evaluation runs:
// - simple shapes most settings use (paths, arithmetic, comparisons): the fast evaluator below;
// - expressions that cannot run long, over small data: jsonata in this thread (expression-tier.ts);
// - everything else: an expression worker, stopped at its deadline (expression-pool.ts).
// The bounds checked inside an evaluation are in expression-core.ts. At load, regular expressions
// (they run in one uninterruptible step) and `$eval` (it would compile unchecked text) are refused.
import type Jsonata from 'jsonata'
import {
  compileInThread,
  evaluateInThread,
  readsClock,
  jsonata,
  jsonataError,
  plainResult,
  ExpressionError,
  type AstNode,
  type ExpressionLimits,
  type ThreadExpression,
} from './expression-core.js'
import { fastEvaluator, NOT_PLAIN, type FastEvaluator } from './expression-fast.js'
import { evaluateInWorker } from './expression-pool.js'
import { inlineRootsOf, isSmallInput, type InlineRoots } from './expression-tier.js'

export { type ExpressionLimits } from './expression-core.js'

/** A load problem inside an expression; `at` is the character offset in the expression's source. */
export interface ExpressionProblem {
  message: string
  at: number
}

/** A root name an expression reads (`start` in `start.qty * 2`), with its offset for messages. */
export interface ExpressionRoot {
  name: string
  field: string | undefined
  at: number
}

/** Parses an expression for the load check: its syntax problem, or the roots it reads. */
export function inspectExpression(source: string): { problem: ExpressionProblem } | { roots: ExpressionRoot[]; problems: ExpressionProblem[] } {
  let ast: Jsonata.ExprNode
  try {
    ast = jsonata(source).ast()
  } catch (error) {
    const { message, position } = jsonataError(error)
    return { problem: { message: `expression syntax error: ${message}`, at: Math.max(0, (position ?? 1) - 1) } }
  }
  const roots: ExpressionRoot[] = []
  const problems: ExpressionProblem[] = []
  walkAst(ast as AstNode, true, roots, problems)
  return { roots, problems }
}

/** Collects the names read from the root object, and refuses regexes and `$eval`. */
function walkAst(node: AstNode | undefined, atRoot: boolean, roots: ExpressionRoot[], problems: ExpressionProblem[]): void {
  if (!node || typeof node !== 'object') return
  const at = Math.max(0, (node.position ?? 1) - 1)
  if (node.type === 'regexp' || node.type === 'regex') {
    problems.push({
      message: 'regular expressions are not allowed in expressions (they cannot be bounded in time); use $contains, $split or $replace with text',
      at,
    })
    return
  }
  if (node.type === 'variable' && node.value === 'eval') {
    problems.push({ message: '$eval is not allowed in expressions; write the expression itself', at })
    return
  }
  if (node.type === 'path') {
    const steps = (node.steps ?? []) as AstNode[]
    // `$$.start.x` and `$.start.x` read the root too.
    const rootVariable = steps[0]?.type === 'variable' && (steps[0].value === '$' || steps[0].value === '')
    const firstName = rootVariable ? 1 : 0
    steps.forEach((step, index) => {
      if (index === firstName && step.type === 'name' && (atRoot || rootVariable)) {
        const next = steps[index + 1]
        roots.push({
          name: String(step.value),
          field: next?.type === 'name' ? String(next.value) : undefined,
          at: Math.max(0, (step.position ?? 1) - String(step.value).length),
        })
        walkExtras(step, roots, problems)
      } else {
        walkAst(step, atRoot && index === 0, roots, problems)
      }
    })
    return
  }
  if (node.type === 'name') {
    if (atRoot) roots.push({ name: String(node.value), field: undefined, at: Math.max(0, (node.position ?? 1) - String(node.value).length) })
    walkExtras(node, roots, problems)
    return
  }
  const children: (AstNode | undefined)[] = [
    node.lhs as AstNode,
    node.rhs as AstNode,
    node.condition,
    node.then,
    node.else,
    node.body,
    node.procedure as AstNode,
    node.pattern,
    node.update,
    node.delete,
    node.expr,
  ]
  if (Array.isArray(node.lhs)) {
    // An object constructor `{ key: value }`: pairs of expressions.
    for (const pair of node.lhs as unknown as AstNode[][]) for (const item of pair) walkAst(item, atRoot, roots, problems)
    children[0] = undefined
  }
  for (const child of children) walkAst(child, atRoot, roots, problems)
  for (const list of [node.arguments, node.expressions] as (AstNode[] | undefined)[]) for (const item of list ?? []) walkAst(item, atRoot, roots, problems)
  walkExtras(node, roots, problems)
}

/** Predicates, stages, sort terms and groups read relative to their step, not the root. */
function walkExtras(node: AstNode, roots: ExpressionRoot[], problems: ExpressionProblem[]): void {
  for (const stage of [...(node.stages ?? []), ...(node.predicate ?? [])]) walkAst(stage.expr, false, roots, problems)
  for (const term of node.terms ?? []) walkAst(term.expression, false, roots, problems)
  for (const pair of node.group?.lhs ?? []) for (const item of pair) walkAst(item, false, roots, problems)
}

/**
 * A compiled expression: its fast evaluator when its shape is simple, the roots to measure when it may
 * run in this thread (false: always in a worker), and the roots a worker needs (null: all of them).
 */
export interface CompiledExpression {
  source: string
  limits: ExpressionLimits
  thread: ThreadExpression
  fast: FastEvaluator | null
  inline: InlineRoots | false
  workerRoots: readonly string[] | null
}

/** Compiles an expression with the project's bounds (`limits.expressionMs`, `textChars`, `arrayItems`). */
export function compileExpression(source: string, limits: ExpressionLimits): CompiledExpression {
  const thread = compileInThread(source, limits)
  const ast = thread.jsonata.ast() as AstNode
  return { source, limits, thread, fast: fastEvaluator(ast, limits), inline: inlineRootsOf(ast), workerRoots: rootsRead(source) }
}

/**
 * Evaluates against the scope: JSONata's "no value" becomes null, and sequences become plain arrays.
 * Throws ExpressionError ("expression timed out", "expression result too large" or JSONata's message).
 */
export async function evaluateExpression(expression: CompiledExpression, input: Record<string, unknown>): Promise<unknown> {
  if (expression.fast) {
    let value: unknown
    try {
      value = expression.fast(input)
    } catch (error) {
      throw new ExpressionError(jsonataError(error).message)
    }
    if (value !== NOT_PLAIN) return plainResult(value, expression.limits)
  }
  if (expression.inline !== false && isSmallInput(input, expression.inline)) return evaluateInThread(expression.thread, input)
  return evaluateInWorker(expression.source, expression.limits, inputFor(input, expression.workerRoots))
}

/** The names an expression reads from its input's root, or null when it reads the root itself (`$`, `$$`). */
function rootsRead(source: string): readonly string[] | null {
  if (/\$\$|\$(?![\w$])/.test(source)) return null
  const inspected = inspectExpression(source)
  if (!('roots' in inspected)) return null
  // `$now()`/`$millis()` read the run's start time (see withRunClock).
  return [...new Set([...inspected.roots.map((root) => root.name), ...(readsClock(source) ? ['run'] : [])])]
}

/** Only the roots a worker needs are copied to it: an earlier node's large output stays here. */
function inputFor(input: Record<string, unknown>, roots: readonly string[] | null): Record<string, unknown> {
  if (roots === null) return { ...input }
  const picked: Record<string, unknown> = {}
  for (const root of roots) if (Object.hasOwn(input, root)) picked[root] = input[root]
  return picked
}
