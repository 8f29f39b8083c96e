// `{{= }}` expressions: typed values, text, roots, and every bound (time, depth, size, regex, $eval,
// the process, secrets). Evaluation goes through the real resolver and the real engine.
import jsonata from 'jsonata'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import { compileExpression, evaluateExpression, inspectExpression } from '../../src/language/expression.js'
import { createScope, evaluateNodeExpressions, resolveValue, templateCacheOf, type ExpressionValues } from '../../src/language/resolve.js'
import { parseTemplate } from '../../src/language/template.js'
import type { RunOutcome } from '../../src/model/run.js'
import type { Project } from '../../src/model/project.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'
import { cleanupTempDirs } from '../helpers.js'
import { buildFlow } from './build.js'
import { projectFromText } from './project-from-text.js'

/** The default bounds with `expressionMs` set (a generous bound where the test is not about time). */
const bounds = (expressionMs: number) => ({ expressionMs, textChars: 1_000_000, arrayItems: 100_000 })

const run = { id: 'run-1', startedAt: '2024-05-01T10:00:00.000Z', trigger: 'http' }
const scope = Object.assign(createScope(run), {
  start: {
    items: [
      { price: 2.5, qty: 2 },
      { price: 10, qty: 1 },
    ],
    name: 'Ada',
    tags: ['a', 'b'],
    n: 3,
    text: 'a&b=c',
    one: ['x'],
  },
})

/** Resolves `text` as a setting of a set node, through the same steps the engine takes. */
// A generous bound where the test is not about time: the machine running tests may be busy.
async function resolveSetting(text: unknown, timeoutMs = 2_000): Promise<unknown> {
  const flow = buildFlow('Expr', [{ id: 'x', type: 'set', values: { v: text } }])
  const node = flow.nodes[0]!
  const values: ExpressionValues = new Map()
  await evaluateNodeExpressions(flow, node, scope, bounds(timeoutMs), values)
  return (resolveValue(node.settings.values, scope, new Map(), templateCacheOf(flow), values) as { v: unknown }).v
}

describe('expression values', () => {
  const cases: [string, unknown, unknown][] = [
    ['a sum keeps its number type', '{{= $sum(start.items.(price * qty)) }}', 15],
    ['a whole expression keeps an array', '{{= start.tags }}', ['a', 'b']],
    ['an object constructor', '{{= {"who": start.name, "n": start.n + 1} }}', { who: 'Ada', n: 4 }],
    ['nested braces close at the right "}}"', '{{= {"a": {"b": start.n}} }}', { a: { b: 3 } }],
    ['a boolean', '{{= start.n > 2 }}', true],
    ['a missing field is null', '{{= start.nothing }}', null],
    ['inside text it is written as text', 'total: {{= $sum(start.items.price) }} EUR', 'total: 12.5 EUR'],
    ['objects inside text are JSON', 'tags={{= start.tags }}', 'tags=["a","b"]'],
    ['expressions and references mix', '{{ start.name }} has {{= $count(start.items) }} items', 'Ada has 2 items'],
    ['run is a root', '{{= run.id & "!" }}', 'run-1!'],
    ['a "}}" inside a string does not end it', '{{= "}}" & start.name }}', '}}Ada'],
    ['$string and $uppercase', '{{= $uppercase(start.name) }}', 'ADA'],
    ['a lambda result is not data', '{{= function($x){ $x } }}', null],
    ['the prototype is not reachable', '{{= start.constructor }}', null],
    ['$lookup reads own properties only', '{{= $lookup(start, "constructor") }}', null],
    ['functions have no properties', '{{= $string.constructor }}', null],
    ['a bounded $pad works', '{{= $pad("7", -3, "0") }}', '007'],
    ['a range at the bound works', '{{= $count([1..100000]) }}', 100000],
    ['ranges inside an array constructor', '{{= [0, 1..3, 9] }}', [0, 1, 2, 3, 9]],
    ['a range from references', '{{= $sum([1..start.n]) }}', 6],
    ['an empty range', '{{= [5..1] }}', []],
    ['a plain path to a list item field maps like JSONata', '{{= start.items.price }}', [2.5, 10]],
    ['a plain path to a one-item list is that list, as in JSONata', '{{= start.one }}', ['x']],
    ['a plain path through text is null', '{{= start.name.first }}', null],
  ]
  for (const [name, text, expected] of cases) {
    it(name, async () => {
      expect(await resolveSetting(text)).toEqual(expected)
    })
  }
})

describe('expression bounds', () => {
  const cases: [string, string, string | RegExp][] = [
    ['unbounded recursion', '($f := function($n){ $f($n + 1) + 1 }; $f(0))', 'expression timed out'],
    ['an endless tail-recursive loop', '($f := function($n){ $f($n + 1) }; $f(0))', 'expression timed out'],
    ['a busy loop over a long range', '$sum([1..99999].($sum([1..99999])))', 'expression timed out'],
    ['a huge range', '$count([1..1000000000])', 'expression result too large'],
    ['a range just over the bound', '$count([1..100001])', 'expression result too large'],
    ['a range of text', '[1..start.name]', 'side of the range operator (..) must evaluate to an integer'],
    ['text that doubles itself', '($f := function($s){ $f($s & $s) }; $f("x"))', 'expression result too large'],
    ['$pad to a huge width', '$pad("x", 1000000000)', 'expression result too large'],
    ['$eval (if it got past the load check)', '$eval("1 + 1")', '$eval is not allowed in expressions'],
    ['a regex (if it got past the load check)', '$match("aaaa", /(a+)+$/)', 'regular expressions are not allowed in expressions'],
    ["a runtime error has JSONata's message", '$number("x") + 1', /Unable to cast value to a number/],
    ['adding text to a number', '"a" + 1', /must evaluate to a number/],
  ]
  for (const [name, source, message] of cases) {
    it(`${name} fails with ${String(message)}`, async () => {
      const began = Date.now()
      const outcome = evaluateExpression(compileExpression(source, bounds(message === 'expression timed out' ? 50 : 2_000)), scope)
      await expect(outcome).rejects.toThrow(message)
      // Bounded: far below any test timeout (the bound itself is 50 ms of evaluation).
      expect(Date.now() - began).toBeLessThan(5_000)
    })
  }

  it('cannot see the process, the environment or globals: only the scope is its input', async () => {
    for (const source of ['process', '$process', 'globalThis', '$globalThis', 'require', '$require', '$$.process', 'constructor.constructor']) {
      expect(await evaluateExpression(compileExpression(source, bounds(2_000)), scope), source).toBeNull()
    }
    await expect(evaluateExpression(compileExpression('$require("fs")', bounds(2_000)), scope)).rejects.toThrow('Attempted to invoke a non-function')
    // `$process` is an unbound variable: nothing to call, the process goes on.
    expect(await evaluateExpression(compileExpression('$process.exit(1)', bounds(2_000)), scope)).toBeNull()
  })
})

describe('inspectExpression (the load check)', () => {
  const cases: [string, string[], string[]][] = [
    ['$sum(start.items.(price * qty))', ['start'], []],
    ['start.items[price > other].sku', ['start'], []],
    ['{"a": basket.x, "b": run.id}', ['basket', 'run'], []],
    ['$map(start.items, function($i){ $i.price + total.n })', ['start', 'total'], []],
    ['$$.start.x', ['start'], []],
    ['start.items^(price)', ['start'], []],
    ['$eval("x")', [], ['$eval is not allowed']],
    ['$replace(start.s, /a/, "b")', ['start'], ['regular expressions are not allowed']],
  ]
  for (const [source, roots, problems] of cases) {
    it(source, () => {
      const result = inspectExpression(source)
      if ('problem' in result) throw new Error(result.problem.message)
      expect(result.roots.map((root) => root.name)).toEqual(roots)
      expect(result.problems.map((problem) => problem.message.slice(0, problems[0]?.length ?? 0))).toEqual(problems)
    })
  }

  it('reports a syntax error with its offset', () => {
    expect(inspectExpression('start.qty * ')).toEqual({ problem: { message: 'expression syntax error: Unexpected end of expression', at: expect.any(Number) } })
  })

  it('parses {{= }} out of text', () => {
    const parsed = parseTemplate('a {{= $sum([1, 2]) }} b {{ start.x }}')
    expect(parsed.expressions).toEqual([{ kind: 'expr', source: '$sum([1, 2])', offset: 6 }])
    expect(parsed.whole).toBeNull()
  })
})

describe('expressions in runs', () => {
  let store: Store
  let project: Project
  const outcomeOf = (slug: string, body: unknown): Promise<RunOutcome> => {
    const flow = project.flows.get(slug)
    if (!flow) throw new Error(slug)
    return runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: { body }, trace: true })
  }

  beforeAll(async () => {
    store = await openSqliteStore(':memory:')
    project = await projectFromText(
      {
        basket: `
name: Basket
nodes:
  - { id: start, type: start, name: Start, inputs: { body: { type: object } }, next: check }
  - id: check
    type: if
    name: Check
    condition: { left: "{{= $sum(start.items.(price * qty)) }}", op: gt, right: "{{= 10 * 2 }}" }
    next: { true: big, false: small }
  - { id: big, type: end, name: Big, body: { size: big, total: "{{= $sum(start.items.(price * qty)) }}" } }
  - { id: small, type: end, name: Small, body: { size: small, total: "{{= $sum(start.items.(price * qty)) }}" } }
`,
        slow: `
name: Slow
nodes:
  - { id: start, type: start, name: Start, next: spin }
  - { id: spin, type: set, name: Spin, values: { v: "{{= ($f := function($n){ $f($n + 1) }; $f(0)) }}" }, next: done }
  - { id: done, type: end, name: Done }
`,
        secret: `
name: Secret
nodes:
  - { id: start, type: start, name: Start, next: keep }
  - { id: keep, type: set, name: Keep, values: { auth: "Bearer \${secrets.API_TOKEN}" }, next: copy }
  - { id: copy, type: set, name: Copy, values: { again: "{{= keep.auth & '!' }}" }, next: look }
  - { id: look, type: set, name: Look, values: { roots: "{{= $keys($$) }}", everything: "{{= $string($$) }}" }, next: done }
  - { id: done, type: end, name: Done, body: "{{ look }}" }
`,
      },
      { settings: 'limits: { expressionMs: 20 }\n', dotenv: 'API_TOKEN=very-secret-token\n' },
    )
  })
  afterAll(async () => {
    await store.close()
    await cleanupTempDirs()
  })

  it('conditions and end bodies take expressions on either side', async () => {
    const big = await outcomeOf('basket', { items: [{ price: 10, qty: 3 }] })
    expect(big).toMatchObject({ kind: 'response', status: 200, body: { size: 'big', total: 30 } })
    const small = await outcomeOf('basket', { items: [{ price: 1, qty: 3 }] })
    expect(small).toMatchObject({ kind: 'response', body: { size: 'small', total: 3 } })
  })

  it('an expression that runs too long fails its node with "expression timed out"', async () => {
    const outcome = await outcomeOf('slow', {})
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'spin', error: 'expression timed out' })
    if (outcome.kind === 'failed') expect(outcome.record).toMatchObject({ status: 'error', failedNodeId: 'spin', error: 'expression timed out' })
  })

  it('a secret that reaches an expression result is masked in the trace', async () => {
    const outcome = await outcomeOf('secret', {})
    expect(outcome.kind).toBe('response')
    const text = JSON.stringify(outcome.kind === 'response' ? outcome.trace : null)
    expect(text).not.toContain('very-secret-token')
    expect(text).toContain('Bearer ***!')
  })

  it("an expression's whole input is the run and the upstream outputs: no secrets, no environment", async () => {
    const outcome = await outcomeOf('secret', {})
    const body = (outcome as { body: { roots: string[]; everything: string } }).body
    expect(body.roots).toEqual(['run', 'start', 'keep', 'copy'])
    // The only way a secret reaches an expression is a node output the author put it in (masked in traces).
    expect(body.everything).not.toContain('API_TOKEN')
    expect(body.everything).not.toContain(process.env.PATH ?? 'no PATH')
  })
})

describe('simple expressions answer without JSONata, exactly as JSONata would', () => {
  const input = { start: { n: 3, x: 2.5, s: 'ab', t: 'b', flag: true, no: false, list: [1, 2], one: ['x'], nothing: null, obj: { a: 1 } } }
  const sources = [
    'start.n',
    'start.missing',
    'start.list',
    'start.one',
    'start.obj',
    'start.nothing',
    'start.s.length',
    'start.n * start.x',
    'start.n + 1',
    'start.n - 10',
    'start.n / 4',
    'start.n % 2',
    'start.n * start.missing',
    'start.n / 0',
    'start.n > 2',
    'start.s < start.t',
    'start.n >= start.x',
    'start.s > 1',
    'start.missing < 1',
    'start.n = 3',
    'start.s != "ab"',
    'start.obj = start.obj',
    'start.list = 1',
    'start.flag and start.no',
    'start.flag or start.no',
    'start.n and true',
    'start.missing or start.flag',
    'start.s & "-" & start.n',
    'start.s & start.missing',
    'start.x * 1.1 & ""',
    'start.obj & start.list',
    '"a" & null',
    '1 + 2',
    'true',
    'null',
    '"text"',
    '$uppercase(start.s)',
    '$lowercase("AbC")',
    '$uppercase(start.missing)',
    '$uppercase(start.n)',
    '$string(start.n)',
    '$string(start.x * 1.1)',
    '$string(start.obj)',
    '$string(start.missing)',
    '$string(start.list)',
    '$length(start.s)',
    '$length("zoë👍")',
    '$length(start.n)',
    'start.s & "-" & $string(start.n)',
    '$string(start.s, true)',
    '$uppercase()',
  ]
  for (const source of sources) {
    it(source, async () => {
      const raw = await Promise.resolve(jsonata(source).evaluate(input)).then(
        (value) => ({ value: value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown) }),
        (error: { message?: string }) => ({ error: error.message }),
      )
      const ours = await evaluateExpression(compileExpression(source, bounds(2_000)), input).then(
        (value) => ({ value }),
        (error: Error) => ({ error: error.message }),
      )
      expect(ours).toEqual(raw)
    })
  }
})

describe('where an expression runs: the main thread and an expression worker answer alike', () => {
  const input = {
    start: {
      n: 3,
      s: 'xaxa',
      items: [
        { price: 2.5, qty: 2 },
        { price: 10, qty: 1 },
      ],
      tags: ['b', 'a', 'b'],
      obj: { a: 1 },
    },
    run,
  }
  const sources = [
    '$sum(start.items.(price * qty))',
    '$sort(start.tags)',
    '$distinct(start.tags)',
    '$replace(start.s, "a", "bc")',
    '$replace(start.s, "a", "<$0>", 1)',
    '$replace(start.s, "", "b")',
    '$map(start.items, function($i){ $i.price })',
    '{"n": start.n, "keys": $keys(start.obj)}',
    '$string(start)',
    '$number("x")',
    'start.items[price > 5].qty',
  ]
  for (const source of sources) {
    it(source, async () => {
      const answer = (compiled: ReturnType<typeof compileExpression>) =>
        evaluateExpression(compiled, input).then(
          (value) => ({ value }),
          (error: Error) => ({ error: error.message }),
        )
      const raw = await Promise.resolve(jsonata(source).evaluate(input)).then(
        (value) => ({ value: value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown) }),
        (error: { message?: string }) => ({ error: error.message }),
      )
      const inThread = compileExpression(source, bounds(2_000))
      inThread.inline = inThread.inline === false ? [] : inThread.inline
      const inWorker = compileExpression(source, bounds(2_000))
      inWorker.fast = null
      inWorker.inline = false
      expect(await answer(inThread)).toEqual(raw)
      expect(await answer(inWorker)).toEqual(raw)
    })
  }

  it('keeps expressions that cannot run long in the main thread, and sends the rest to a worker', () => {
    const inline = (source: string) => compileExpression(source, bounds(50)).inline !== false
    expect(inline('$sum(start.items.(price * qty))')).toBe(true)
    expect(inline('{"a": $uppercase(start.s), "b": start.n > 2 ? "big" : "small"}')).toBe(true)
    for (const source of [
      '$sort(start.tags)',
      '$distinct(start.tags)',
      '$replace(start.s, "a", "b")',
      'start.items^(price)',
      '[1..start.n]',
      '$map(start.tags, $uppercase)',
      '($f := $sort; $f(start.tags))',
      'start.tags ~> $count',
    ]) {
      expect(inline(source), source).toBe(false)
    }
  })
})

describe('bounds a step check cannot enforce: the worker is stopped', () => {
  const big = {
    start: {
      items: Array.from({ length: 90_000 }, (_, i) => (i * 7919) % 90_000),
      many: Array.from({ length: 150_000 }, (_, i) => i),
      objects: Array.from({ length: 20_000 }, (_, i) => ({ a: i % 1000 })),
      text: 'a'.repeat(20_000),
    },
    run,
  }
  const cases: [string, string][] = [
    ['$count($sort(start.items))', 'expression timed out'],
    ['$count($distinct(start.items))', 'expression timed out'],
    ['$count($distinct(start.objects))', 'expression timed out'],
    // Any list a step makes or reads is held to limits.arrayItems, whatever made it.
    ['$count($distinct(start.many))', 'expression result too large'],
    ['$count($split($pad("", 150000, "ab"), ""))', 'expression result too large'],
    ['$string(start.many)', 'expression result too large'],
    ['$base64encode($pad("", 900000, "a"))', 'expression result too large'],
    ['$join($map([1..100000], function($i){ "abcdefghijk" }))', 'expression'],
    ['$count($spread(start.objects).a)', 'expression'],
    ['$length($replace(start.text, "a", $pad("", 5000, "b")))', 'expression result too large'],
    // Text past V8's own limit, in one step: the bound of textChars all the same.
    ['($s := $pad("", 999999, "a"); $join([1..600].($s)))', 'expression result too large'],
    // A worker filling its heap is stopped (by its deadline or its heap limit), and the server goes on.
    ['$join([1..300].($pad("", 999999, "a")))', 'expression'],
    ['$split($pad("", 999999, "ab"), "")', 'expression result too large'],
  ]
  for (const [source, reason] of cases) {
    it(`${source} fails with ${reason}`, async () => {
      // A size bound is checked before (or as) the value is made, so it is given time enough to be
      // reached on a slow machine: with 50 ms the worker's deadline can come first there.
      const bound = reason === 'expression result too large' ? 2_000 : 50
      await expect(evaluateExpression(compileExpression(source, bounds(bound)), big)).rejects.toThrow(reason)
    })
  }

  it('a worker replaced after a stop evaluates the next expression', async () => {
    await expect(evaluateExpression(compileExpression('$count($sort(start.items))', bounds(50)), big)).rejects.toThrow('expression timed out')
    expect(await evaluateExpression(compileExpression('$sort(start.items)[0]', bounds(2_000)), { start: { items: [3, 1, 2] } })).toBe(1)
  })
})

describe('$split counts its items before making them', () => {
  it.each([
    ['$split("a,b,,c", ",")', ['a', 'b', '', 'c']],
    ['$split("a,b,c", ",", 2)', ['a', 'b']],
    ['$split("abc", "")', ['a', 'b', 'c']],
    ['$split("", ",")', ['']],
    ['$split("a--b--", "--")', ['a', 'b', '']],
  ])('%s answers as jsonata does', async (source, expected) => {
    expect(await evaluateExpression(compileExpression(source, bounds(2_000)), { run })).toEqual(expected)
  })

  it('refuses past limits.arrayItems at once, at the bound and not below it', async () => {
    const small = { expressionMs: 2_000, textChars: 1_000_000, arrayItems: 3 }
    expect(await evaluateExpression(compileExpression('$split("a,b,c", ",")', small), { run })).toEqual(['a', 'b', 'c'])
    expect(await evaluateExpression(compileExpression('$split("a,b,c,d", ",", 3)', small), { run })).toEqual(['a', 'b', 'c'])
    await expect(evaluateExpression(compileExpression('$split("a,b,c,d", ",")', small), { run })).rejects.toThrow('expression result too large')
    await expect(evaluateExpression(compileExpression('$split("abcd", "")', small), { run })).rejects.toThrow('expression result too large')
  })
})
