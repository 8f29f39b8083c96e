// `{{= expression }}`: JSONata, bounded. The input is the run's scope (upstream outputs and `run`),
// which holds no secrets; JSONata itself reads own properties only and cannot call JavaScript it
// was not given. What could still escape a bound is closed here:
// - time: counted on every evaluation step (StepBudget), and depth: jsonata's stack bound
//   -> "expression timed out";
// - ranges (`[1..1e9]`): rewritten into a bounded function;
// - regular expressions run in one uninterruptible step (catastrophic backtracking): refused at load,
//   and the regex engine given to jsonata refuses them at run time too;
// - `$eval` would compile text that was never checked at load: refused at load, and unbound at run time;
// - text that doubles itself in a loop (`$s & $s`, rewritten into a bounded join) or `$pad` to a huge
//   width: a text-length bound.
import { createRequire } from 'node:module'
import type Jsonata from 'jsonata'

// jsonata is CommonJS: required, not imported. An `import` makes Node read its 200 kB twice more
// first (module-format detection, then the CommonJS export lexer), ~15 ms of every command. And
// required on first use: a project without `{{= }}` never loads it (~10 MB of RSS in serve).
let jsonataModule: typeof Jsonata | undefined
const jsonata: typeof Jsonata = (source, options) => {
  jsonataModule ??= createRequire(import.meta.url)('jsonata') as typeof Jsonata
  return jsonataModule(source, options)
}

/** How deep evaluation may nest (each step of an expression is one level; recursion adds levels). */
export const EXPRESSION_DEPTH = 500
/** The longest array a range may build. */
export const EXPRESSION_SEQUENCE = 100_000
/** The longest text an expression may produce. */
export const EXPRESSION_TEXT = 1_000_000

export const EXPRESSION_TIMED_OUT = 'expression timed out'

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

type AstNode = Omit<Jsonata.ExprNode, 'type'> & {
  type: string
  condition?: AstNode
  then?: AstNode
  else?: AstNode
  body?: AstNode
  stages?: { expr?: AstNode }[]
  predicate?: { expr?: AstNode }[]
  terms?: { expression?: AstNode }[]
  group?: { lhs?: [AstNode, AstNode][] }
  pattern?: AstNode
  update?: AstNode
  delete?: AstNode
  expr?: AstNode
  keepArray?: boolean
  tuple?: boolean
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

/** A regex engine that refuses: regex literals are refused at load; this closes any other way in. */
class NoRegex {
  constructor() {
    throw new Error('regular expressions are not allowed in expressions')
  }
}

/** The name of the function a range `[a..b]` is turned into: it checks the size before building. */
const RANGE_FUNCTION = '__flowctlRange'
/** The same for `a & b`. */
const CONCAT_FUNCTION = '__flowctlConcat'

/** Bindings every evaluation gets: they shadow the built-ins that could escape a bound. */
const SAFE_BINDINGS: Record<string, unknown> = {
  eval: () => {
    throw new Error('$eval is not allowed in expressions')
  },
  [RANGE_FUNCTION]: boundedRange,
  [CONCAT_FUNCTION]: boundedConcat,
  pad: (text: unknown, width: unknown, char?: unknown) => {
    if (typeof width === 'number' && Math.abs(width) > EXPRESSION_TEXT) throw new Error(`$pad width may be at most ${EXPRESSION_TEXT}`)
    return padText(text, width, char)
  },
}

function padText(text: unknown, width: unknown, char: unknown): string | undefined {
  if (text === undefined) return undefined
  const value = String(text)
  const fill = typeof char === 'string' && char !== '' ? char : ' '
  const target = typeof width === 'number' ? Math.trunc(width) : 0
  const missing = Math.abs(target) - [...value].length
  if (missing <= 0) return value
  const padding = fill.repeat(Math.ceil(missing / fill.length)).slice(0, missing)
  return target > 0 ? value + padding : padding + value
}

/**
 * Time an evaluation spent is counted between its steps, each gap counted up to GAP_CAP_MS: a pause
 * that is not the expression's doing (the machine busy with other processes, a garbage collection,
 * the first run of cold code) does not fail a small expression, while a loop of many steps still
 * adds up. jsonata's own wall-clock timeout stays as a backstop at BACKSTOP_FACTOR × the bound.
 */
const GAP_CAP_MS = 2
const BACKSTOP_FACTOR = 20

/**
 * The options object jsonata reads on every evaluation step (its guardrail reads `timeout`): the getter
 * counts the time since the previous step, each gap up to GAP_CAP_MS, and stops the evaluation past the
 * bound. It answers jsonata's own wall-clock check with the backstop. Synchronous, so it costs far less
 * than jsonata's asynchronous entry/exit hooks. Evaluations of one compiled expression share it; two at
 * once (an each node) then share one budget, which can only stop them sooner.
 */
class StepBudget {
  readonly stack = EXPRESSION_DEPTH
  readonly RegexEngine = NoRegex as unknown as RegExpConstructor
  private spentMs = 0
  private lastMs = 0

  constructor(private readonly limitMs: number) {}

  start(): void {
    this.spentMs = 0
    this.lastMs = performance.now()
  }

  get timeout(): number {
    const now = performance.now()
    this.spentMs += Math.min(now - this.lastMs, GAP_CAP_MS)
    this.lastMs = now
    if (this.spentMs > this.limitMs) timedOut()
    return this.limitMs * BACKSTOP_FACTOR
  }
}

function timedOut(): never {
  throw { code: 'D1012', message: EXPRESSION_TIMED_OUT }
}

/**
 * A compiled expression. `fast` is set for the simple shapes most settings use (paths, literals,
 * arithmetic, comparisons, `and`/`or`, `&`): it answers synchronously, or NOT_PLAIN when a value is
 * not one it handles exactly as JSONata would (then JSONata evaluates, errors included).
 */
export interface CompiledExpression {
  jsonata: Jsonata.Expression
  budget: StepBudget
  fast: FastEvaluator | null
}

type FastEvaluator = (input: Record<string, unknown>) => unknown

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
function fastEvaluator(node: AstNode): FastEvaluator | null {
  if (node.stages || node.predicate || node.group || node.keepArray) return null
  if (node.type === 'path') {
    const path = plainPath(node)
    return path ? (input) => readPlainPath(input, path) : null
  }
  if (node.type === 'number' || node.type === 'string' || node.type === 'value') {
    const value: unknown = node.value
    return () => value
  }
  if (node.type === 'function' && node.procedure?.type === 'variable' && node.procedure.value === CONCAT_FUNCTION && node.arguments?.length === 2) {
    const [left, right] = (node.arguments as AstNode[]).map(fastEvaluator)
    if (!left || !right) return null
    return (input) => {
      const a = left(input)
      const b = right(input)
      return a === NOT_PLAIN || b === NOT_PLAIN ? NOT_PLAIN : boundedConcat(a, b)
    }
  }
  const builtin = node.type === 'function' && node.procedure?.type === 'variable' ? FAST_FUNCTIONS[String(node.procedure.value)] : undefined
  // One argument each: with none, JSONata would use the context value instead.
  if (builtin && node.arguments?.length === 1) {
    const args = ((node.arguments ?? []) as AstNode[]).map(fastEvaluator)
    if (args.some((arg) => arg === null)) return null
    return (input) => {
      const values = args.map((arg) => (arg as FastEvaluator)(input))
      return values.includes(NOT_PLAIN) ? NOT_PLAIN : builtin(values)
    }
  }
  if (node.type !== 'binary' || typeof node.value !== 'string') return null
  const left = fastEvaluator(node.lhs as AstNode)
  const right = fastEvaluator(node.rhs as AstNode)
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

/** Compiles an expression for running, with the project's time bound. */
export function compileExpression(source: string, timeoutMs: number): CompiledExpression {
  const budget = new StepBudget(timeoutMs)
  const expression = jsonata(source, budget as unknown as Jsonata.JsonataOptions)
  rewriteUnbounded(expression.ast() as AstNode)
  return { jsonata: expression, budget, fast: fastEvaluator(expression.ast() as AstNode) }
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

/**
 * Ranges (`[1..n]`) and text joins (`a & b`) are rewritten into calls of bounded functions: JSONata's
 * own range limit is 1e7 items, built before anything could stop it, and text that doubles itself in
 * a loop would grow until it exhausts memory.
 */
function rewriteUnbounded(node: AstNode | undefined): void {
  if (!node || typeof node !== 'object') return
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) for (const item of value) rewriteUnbounded(item as AstNode)
    else if (value && typeof value === 'object') rewriteUnbounded(value as AstNode)
  }
  if (node.type === 'binary' && (node.value === '..' || node.value === '&')) {
    const { lhs, rhs } = node
    const name = node.value === '..' ? RANGE_FUNCTION : CONCAT_FUNCTION
    node.type = 'function'
    node.value = '('
    node.procedure = { type: 'variable', value: name, position: node.position } as Jsonata.ExprNode
    node.arguments = [lhs as Jsonata.ExprNode, rhs as Jsonata.ExprNode]
    delete node.lhs
    delete node.rhs
  }
}

/** `a & b` as JSONata joins text (missing is empty, numbers to 15 significant digits), bounded in length. */
function boundedConcat(left: unknown, right: unknown): string {
  const text = textForJoin(left) + textForJoin(right)
  if (text.length > EXPRESSION_TEXT) throw { code: 'FLOWCTL_TEXT', message: `expression produced text longer than ${EXPRESSION_TEXT} characters` }
  return text
}

function isJsonataFunction(value: unknown): boolean {
  return typeof value === 'function' || (value !== null && typeof value === 'object' && ('_jsonata_lambda' in value || '_jsonata_function' in value))
}

function textForJoin(value: unknown): string {
  if (value === undefined || isJsonataFunction(value)) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' && !Number.isFinite(value)) throw { code: 'D3001', value }
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'number' && !Number.isInteger(item) && Number.isFinite(item)) return Number(item.toPrecision(15))
    return isJsonataFunction(item) ? '' : item
  })
}

function boundedRange(from: unknown, to: unknown): number[] | undefined {
  if (from === undefined || to === undefined) return undefined
  if (!Number.isInteger(from) || !Number.isInteger(to))
    throw { code: 'T2003', message: 'The left and right sides of the range operator (..) must evaluate to integers' }
  const start = from as number
  const end = to as number
  if (start > end) return undefined
  const size = end - start + 1
  if (size > EXPRESSION_SEQUENCE)
    throw {
      code: 'FLOWCTL_RANGE',
      message: `The size of the sequence made by the range operator (..) must not exceed ${EXPRESSION_SEQUENCE}; it would be ${size}`,
    }
  return Array.from({ length: size }, (_, i) => start + i)
}

/** Thrown when an expression fails: the reason is JSONata's message, or "expression timed out". */
export class ExpressionError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ExpressionError'
  }
}

/** Evaluates against the scope; JSONata's "no value" becomes null, and sequences become plain arrays. */
export async function evaluateExpression(expression: CompiledExpression, input: Record<string, unknown>): Promise<unknown> {
  if (expression.fast) {
    let value: unknown
    try {
      value = expression.fast(input)
    } catch (error) {
      throw new ExpressionError(jsonataError(error).message)
    }
    if (value !== NOT_PLAIN) return plain(value)
  }
  let result: unknown
  try {
    expression.budget.start()
    result = await expression.jsonata.evaluate(input, SAFE_BINDINGS)
  } catch (error) {
    const { code, message } = jsonataError(error)
    if (code === 'D1011' || code === 'D1012') throw new ExpressionError(EXPRESSION_TIMED_OUT)
    throw new ExpressionError(message)
  }
  return plain(result)
}

const NOT_PLAIN = Symbol('not plain')

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

/** JSONata results may be sequences (arrays with flags) or functions: keep plain JSON data only. */
function plain(value: unknown): unknown {
  if (value === undefined || typeof value === 'function') return null
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === 'object') {
    // A JSONata function value (a lambda or a built-in) is not data.
    if ('_jsonata_lambda' in value || '_jsonata_function' in value) return null
    const result: Record<string, unknown> = {}
    for (const key of Object.keys(value)) result[key] = plain((value as Record<string, unknown>)[key])
    return result
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null
  return value
}

function jsonataError(error: unknown): { code: string | undefined; message: string; position: number | undefined } {
  if (error !== null && typeof error === 'object') {
    const { code, message, position } = error as { code?: unknown; message?: unknown; position?: unknown }
    const text = typeof message === 'string' && message !== '' ? message : typeof code === 'string' ? `JSONata error ${code}` : 'expression failed'
    return { code: typeof code === 'string' ? code : undefined, message: text, position: typeof position === 'number' ? position : undefined }
  }
  return { code: undefined, message: String(error), position: undefined }
}
