// Evaluating one compiled JSONata expression in the current thread, with every bound that can be
// checked from inside it. The main thread uses it for expressions that cannot run long
// (expression-tier.ts); the expression workers (expression-worker.ts) use it for the rest, under a
// deadline and a heap limit that stop what no check from inside can.
// - time: counted on every evaluation step (StepBudget), depth: jsonata's stack bound;
// - ranges (`[1..1e9]`) and text joins (`a & b`): rewritten into functions that check the size first;
// - `$pad` to a huge width, `$eval`, regular expressions: refused;
// - the result: every text and array in it within limits.textChars and limits.arrayItems.
import { createRequire } from 'node:module'
import type Jsonata from 'jsonata'

// jsonata is CommonJS: required, not imported. An `import` makes Node read its 200 kB twice more
// first (module-format detection, then the CommonJS export lexer), ~15 ms of every command. And
// required on first use: a project without `{{= }}` never loads it (~10 MB of RSS in serve).
let jsonataModule: typeof Jsonata | undefined
export const jsonata: typeof Jsonata = (source, options) => {
  jsonataModule ??= createRequire(import.meta.url)('jsonata') as typeof Jsonata
  return jsonataModule(source, options)
}

/** How deep evaluation may nest (each step of an expression is one level; recursion adds levels). */
const EXPRESSION_DEPTH = 500

export const EXPRESSION_TIMED_OUT = 'expression timed out'
export const EXPRESSION_TOO_LARGE = 'expression result too large'

/** The bounds of one evaluation: `limits.expressionMs`, `limits.textChars`, `limits.arrayItems` (SPEC §18). */
export interface ExpressionLimits {
  expressionMs: number
  textChars: number
  arrayItems: number
}

/** Thrown when an expression fails: the reason is JSONata's message, or one of the bounds' reasons. */
export class ExpressionError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ExpressionError'
  }
}

/** The node of jsonata's AST, with the members flowctl reads. */
export type AstNode = Omit<Jsonata.ExprNode, 'type'> & {
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

/** A regex engine that refuses: regex literals are refused at load; this closes any other way in. */
class NoRegex {
  constructor() {
    throw new Error('regular expressions are not allowed in expressions')
  }
}

/** The name of the function a range `[a..b]` is turned into: it checks the size before building. */
const RANGE_FUNCTION = '__flowctlRange'
/** The same for `a & b`. */
export const CONCAT_FUNCTION = '__flowctlConcat'

/** A bound passed: jsonata carries the thrown object to evaluate's caller as it is. */
function tooLarge(): never {
  throw { code: 'FLOWCTL_TOO_LARGE', message: EXPRESSION_TOO_LARGE }
}

/** Bindings every evaluation gets: they shadow the built-ins that could escape a bound. */
function safeBindings(limits: ExpressionLimits): Record<string, unknown> {
  return {
    eval: () => {
      throw new Error('$eval is not allowed in expressions')
    },
    [RANGE_FUNCTION]: (from: unknown, to: unknown) => boundedRange(from, to, limits.arrayItems),
    [CONCAT_FUNCTION]: (left: unknown, right: unknown) => boundedConcat(left, right, limits.textChars),
    pad: (text: unknown, width: unknown, char?: unknown) => {
      if (typeof width === 'number' && Math.abs(width) > limits.textChars) tooLarge()
      return padText(text, width, char)
    },
    replace: (text: unknown, pattern: unknown, replacement: unknown, limit?: unknown) => {
      if (replacedLength(text, pattern, replacement, limit) > limits.textChars) tooLarge()
      return original('replace', text, pattern, replacement, limit)
    },
    split: (text: unknown, separator: unknown, limit?: unknown) => {
      if (splitCount(text, separator, limit) > limits.arrayItems) tooLarge()
      return original('split', text, separator, limit)
    },
  }
}

/**
 * How many items `$split` makes, counted before they are made: a text of a million characters split
 * on "" is a million strings, which a slow machine may not finish within the time bound (the error
 * would then depend on the machine). 0 when the arguments are not text (jsonata's own split reports it).
 */
function splitCount(text: unknown, separator: unknown, limit: unknown): number {
  if (typeof text !== 'string' || typeof separator !== 'string') return 0
  let count = 1
  if (separator === '') count = text.length
  else for (let at = text.indexOf(separator); at !== -1 && count <= text.length; at = text.indexOf(separator, at + separator.length)) count++
  return typeof limit === 'number' && limit >= 0 ? Math.min(count, limit) : count
}

/**
 * The most text `$replace` can make, counted before it is made: a 20 KB text whose every character is
 * replaced by 5,000 would otherwise build 100 million characters in one step. Each `$` in the
 * replacement may bring back the match (`$0`), so it counts as the pattern's length. 0 when the
 * arguments are not text (jsonata's own replace then reports the error).
 */
function replacedLength(text: unknown, pattern: unknown, replacement: unknown, limit: unknown): number {
  if (typeof text !== 'string' || typeof pattern !== 'string' || pattern === '' || typeof replacement !== 'string') return 0
  const most = typeof limit === 'number' && limit >= 0 ? limit : Infinity
  let count = 0
  for (let at = text.indexOf(pattern); at !== -1 && count < most; at = text.indexOf(pattern, at + pattern.length)) count++
  const dollars = replacement.split('$').length - 1
  return text.length + count * (replacement.length + dollars * pattern.length - pattern.length)
}

/**
 * jsonata's own built-in (`$replace`, `$split`), called once the size check passed (the bindings
 * above shadow them): `$name($a0, $a1…)`, compiled once per name and argument count.
 */
const originalExpressions = new Map<string, Jsonata.Expression>()
function original(name: string, ...args: unknown[]): Promise<unknown> {
  // The optional last argument (`limit`), when not given, is left out, as the caller wrote it.
  if (args.length > 0 && args[args.length - 1] === undefined) args.pop()
  const key = `${name}/${args.length}`
  let expression = originalExpressions.get(key)
  if (!expression) originalExpressions.set(key, (expression = jsonata(`$${name}(${args.map((_, i) => `$a${i}`).join(', ')})`)))
  return expression.evaluate({}, Object.fromEntries(args.map((arg, i) => [`a${i}`, arg])))
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
 * adds up. jsonata's own wall-clock timeout stays as a backstop at BACKSTOP_FACTOR × the bound. A
 * single step that runs long (a built-in over a large value) is not counted here: such expressions
 * run in a worker with a deadline (expression-tier.ts decides which).
 */
const GAP_CAP_MS = 2
const BACKSTOP_FACTOR = 20

/**
 * The options object jsonata reads on every evaluation step (its guardrail reads `timeout`): the getter
 * counts the time since the previous step, each gap up to GAP_CAP_MS, and stops the evaluation past the
 * bound. Synchronous, so it costs far less than jsonata's asynchronous entry/exit hooks. Evaluations of
 * one compiled expression share it; two at once (an each node) then share one budget, which can only
 * stop them sooner.
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
    if (this.spentMs > this.limitMs) throw { code: 'D1012', message: EXPRESSION_TIMED_OUT }
    return this.limitMs * BACKSTOP_FACTOR
  }
}

/** An expression compiled for evaluation in this thread. */
export interface ThreadExpression {
  jsonata: Jsonata.Expression
  budget: StepBudget
  bindings: Record<string, unknown>
  limits: ExpressionLimits
}

/**
 * Compiles an expression with its bounds (ranges and text joins rewritten into bounded functions).
 * `everyValue` checks the size of every value a step makes, not only of the result: what an
 * expression worker does, where such steps can be large. It costs an await per step (jsonata's exit
 * hook), which the main thread's small evaluations do not pay: their values stay small.
 */
export function compileInThread(source: string, limits: ExpressionLimits, everyValue = false): ThreadExpression {
  const budget = new StepBudget(limits.expressionMs)
  const expression = jsonata(source, budget as unknown as Jsonata.JsonataOptions)
  rewriteUnbounded(expression.ast() as AstNode)
  if (everyValue) {
    expression.assign(EXIT_HOOK as unknown as string, (_node: unknown, _input: unknown, _environment: unknown, value: unknown) => {
      if ((typeof value === 'string' && value.length > limits.textChars) || (Array.isArray(value) && value.length > limits.arrayItems)) tooLarge()
    })
  }
  return { jsonata: expression, budget, bindings: safeBindings(limits), limits }
}

/** jsonata calls the function bound to this symbol with each step's value. */
const EXIT_HOOK = Symbol.for('jsonata.__evaluate_exit')

/** Evaluates in this thread; the result is plain JSON data within the size bounds. Throws ExpressionError. */
export async function evaluateInThread(expression: ThreadExpression, input: Record<string, unknown>): Promise<unknown> {
  let result: unknown
  try {
    expression.budget.start()
    result = await expression.jsonata.evaluate(input, withRunClock(expression.bindings, input))
  } catch (error) {
    throw expressionErrorOf(error)
  }
  return plainResult(result, expression.limits)
}

/** Whether an expression calls `$now()` or `$millis()`: its input then needs the `run` root (runClock). */
export function readsClock(source: string): boolean {
  return /\$(?:now|millis)\b/.test(source)
}

/**
 * `$now()` and `$millis()` are the run's start (`run.startedAt`), not the moment of each evaluation:
 * one run sees one time in every expression, and a flow test's `now:` (which sets startedAt) fixes
 * them (SPEC §20). Without a run in the input, JSONata's own clock answers.
 */
function withRunClock(bindings: Record<string, unknown>, input: Record<string, unknown>): Record<string, unknown> {
  const run = input.run as { startedAt?: unknown } | undefined
  const millis = typeof run?.startedAt === 'string' ? Date.parse(run.startedAt) : Number.NaN
  if (Number.isNaN(millis)) return bindings
  return {
    ...bindings,
    millis: () => millis,
    // Formats as the built-in does ($now(picture, timezone)), through JSONata's own $fromMillis.
    now: (picture?: unknown, timezone?: unknown) => fromMillis().evaluate({}, { m: millis, p: picture, t: timezone }),
  }
}

let fromMillisExpression: Jsonata.Expression | null = null
function fromMillis(): Jsonata.Expression {
  fromMillisExpression ??= jsonata('$fromMillis($m, $p, $t)')
  return fromMillisExpression
}

/** The ExpressionError for what jsonata (or a bound) threw. */
function expressionErrorOf(error: unknown): ExpressionError {
  const { code, message } = jsonataError(error)
  if (code === 'D1011' || code === 'D1012') return new ExpressionError(EXPRESSION_TIMED_OUT)
  // Past V8's own string limit, however it was built: the same bound as textChars.
  if (error instanceof RangeError && /Invalid string length|Invalid array length/.test(error.message)) return new ExpressionError(EXPRESSION_TOO_LARGE)
  return new ExpressionError(message)
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
export function boundedConcat(left: unknown, right: unknown, textChars: number): string {
  const text = textForJoin(left) + textForJoin(right)
  if (text.length > textChars) tooLarge()
  return text
}

function isJsonataFunction(value: unknown): boolean {
  return typeof value === 'function' || (value !== null && typeof value === 'object' && ('_jsonata_lambda' in value || '_jsonata_function' in value))
}

export function textForJoin(value: unknown): string {
  if (value === undefined || isJsonataFunction(value)) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' && !Number.isFinite(value)) throw { code: 'D3001', value }
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'number' && !Number.isInteger(item) && Number.isFinite(item)) return Number(item.toPrecision(15))
    return isJsonataFunction(item) ? '' : item
  })
}

function boundedRange(from: unknown, to: unknown, arrayItems: number): number[] | undefined {
  if (from === undefined || to === undefined) return undefined
  if (!Number.isInteger(from) || !Number.isInteger(to))
    throw { code: 'T2003', message: 'The left and right sides of the range operator (..) must evaluate to integers' }
  const start = from as number
  const end = to as number
  if (start > end) return undefined
  if (end - start + 1 > arrayItems) tooLarge()
  return Array.from({ length: end - start + 1 }, (_, i) => start + i)
}

/**
 * JSONata results may be sequences (arrays with flags) or functions: keep plain JSON data only, and
 * fail when any text or array in it passes its bound (one walk does both).
 */
export function plainResult(value: unknown, limits: Pick<ExpressionLimits, 'textChars' | 'arrayItems'>): unknown {
  if (value === undefined || typeof value === 'function') return null
  if (typeof value === 'string') {
    if (value.length > limits.textChars) throw new ExpressionError(EXPRESSION_TOO_LARGE)
    return value
  }
  if (Array.isArray(value)) {
    if (value.length > limits.arrayItems) throw new ExpressionError(EXPRESSION_TOO_LARGE)
    return value.map((item) => plainResult(item, limits))
  }
  if (value !== null && typeof value === 'object') {
    // A JSONata function value (a lambda or a built-in) is not data.
    if ('_jsonata_lambda' in value || '_jsonata_function' in value) return null
    const result: Record<string, unknown> = {}
    for (const key of Object.keys(value)) result[key] = plainResult((value as Record<string, unknown>)[key], limits)
    return result
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null
  return value
}

export function jsonataError(error: unknown): { code: string | undefined; message: string; position: number | undefined } {
  if (error !== null && typeof error === 'object') {
    const { code, message, position } = error as { code?: unknown; message?: unknown; position?: unknown }
    const text = typeof message === 'string' && message !== '' ? message : typeof code === 'string' ? `JSONata error ${code}` : 'expression failed'
    return { code: typeof code === 'string' ? code : undefined, message: text, position: typeof position === 'number' ? position : undefined }
  }
  return { code: undefined, message: String(error), position: undefined }
}
