// checkFlowFile on small inline flows: the checks that need no fixture folder.
import { describe, expect, it } from 'vitest'
import { checkFlowFile } from '../../src/project/flow-file.js'

const context = { timezone: 'UTC', secrets: new Map([['TOKEN', 'secret-value']]), secretsFile: '.env' }

function check(nodes: string, top = '') {
  const text = `name: Test\n${top}nodes:\n${nodes}`
  return checkFlowFile('flows/test.yaml', text, context)
}
const describeProblems = (result: ReturnType<typeof check>) =>
  result.problems.map((p) => `${p.line}:${p.column} ${p.severity === 'warning' ? 'warning: ' : ''}${p.message}`)

const START = `  - id: start
    type: start
    name: Start
`
const ifNode = (condition: string) => `${START}    next: check
  - id: check
    type: if
    name: Check
    condition: ${condition}
    next: { true: done, false: done }
  - id: done
    type: end
    name: Done
`

describe('conditions', () => {
  it.each([
    ['{ left: 1, op: eq, right: 1 }', []],
    ['{ any: [{ left: 1, op: exists }, { not: { left: "{{ start.a }}", op: empty } }] }', []],
    ['{ all: [{ left: 1, op: eq }], left: 2 }', ['10:16 node "check": condition with "all" cannot have other keys (left)']],
    ['{}', ['10:16 node "check": condition needs "left"', '10:16 node "check": condition needs "op"']],
    [
      '{ left: 1, op: eq, rigth: 2 }',
      ['10:35 node "check": "rigth" is not allowed in condition (did you mean "right"?) (allowed: left, op, right, all, any, not)'],
    ],
    ['{ not: { left: 1 } }', ['10:23 node "check": condition.not needs "op"']],
  ])('%s', (condition, expected) => {
    expect(describeProblems(check(ifNode(condition)))).toEqual(expected)
  })
})

describe('switch ports come from its cases', () => {
  const flow = (next: string) => `${START}    next: route
  - id: route
    type: switch
    name: Route
    value: "{{ start.state }}"
    cases: [{ value: a, port: first }, { value: b, port: second }]
    next: ${next}
  - id: done
    type: end
    name: Done
`
  it('accepts the case ports and the default port', () => {
    const result = check(flow('{ first: done, second: done, default: done }'))
    expect(describeProblems(result)).toEqual([])
    expect(result.flow?.nodesById.get('route')?.next).toEqual({ first: 'done', second: 'done', default: 'done' })
  })

  it('warns about ports without an edge and rejects unknown ports', () => {
    expect(describeProblems(check(flow('{ first: done, third: done }')))).toEqual([
      '12:26 node "route": "third" is not a port of this switch node; its ports are: first, second, default',
      '12:5 warning: node "route": port "second" has no next node; this path ends without an End node; the run answers 204',
      '12:5 warning: node "route": port "default" has no next node; this path ends without an End node; the run answers 204',
    ])
  })

  it('rejects a single id for a multi-port node', () => {
    expect(describeProblems(check(flow('done')))).toEqual([
      '12:11 node "route": next must map each port to a node id, like { first: <node id>, second: <node id>, default: <node id> }',
    ])
  })
})

describe('references', () => {
  const chain = (endBody: string) => `${START}    next: a
  - id: a
    type: set
    name: First Step
    values: { n: 1 }
    next: b
  - id: b
    type: if
    name: Branch
    condition: { left: "{{ first_step.n }}", op: eq, right: 1 }
    next: { true: c, false: done }
  - id: c
    type: set
    name: Only True
    values: { n: 2 }
    next: done
  - id: done
    type: end
    name: Done
    body: ${endBody}
`
  it('allows any ancestor on some path, run fields and defined secrets', () => {
    const result = check(
      chain(
        '{ a: "{{ first_step.n }}", c: "{{only_true.n}}", run: "{{ run.id }} at {{ run.startedAt }}", s: "${secrets.TOKEN}", items: "{{ start.items.0.sku }}" }',
      ),
    )
    expect(describeProblems(result)).toEqual([])
    expect(result.flow).not.toBeNull()
  })

  it('rejects a root that is not a node name and warns about unknown secrets', () => {
    expect(describeProblems(check(chain('["{{ first.n }}", "${secrets.NOPE}"]')))).toEqual([
      '25:12 node "done": "{{ first.n }}" refers to "first", which is not a node of this flow (did you mean "first_step"?) (known names: run, start, first_step, branch, only_true, done)',
      '25:29 warning: node "done": secret "NOPE" is not defined in .env; it must be supplied at run time (FLOWCTL_SECRET_NOPE)',
    ])
  })

  it('does not treat strings in input and response schemas as templates', () => {
    const result = check(`  - id: start
    type: start
    name: Start
    inputs: { body: { type: object, properties: { a: { type: string, description: "{{ not a ref }}" } } } }
    next: done
  - id: done
    type: end
    name: Done
    schema: { type: object, description: "{{ nope }}" }
`)
    expect(describeProblems(result)).toEqual([])
  })
})

describe('start inputs and schedule', () => {
  it('reports an invalid input schema', () => {
    const result = check(`${START}    inputs: { query: { type: object, properties: { n: { type: 12 } } } }
    next: done
  - id: done
    type: end
    name: Done
`)
    expect(describeProblems(result)).toEqual([
      '6:63 node "start": inputs.query is not a valid JSON Schema: properties.n.type must be one of: array, boolean, integer, null, number, object, string (not 12)',
    ])
  })

  it('checks a missing schedule input against the required body fields', () => {
    const result = check(
      `${START}    inputs: { body: { type: object, required: [sku], properties: { sku: { type: string } } } }
    next: done
  - id: done
    type: end
    name: Done
`,
      'schedule: { cron: "*/5 * * * *", enabled: false }\n',
    )
    expect(describeProblems(result)).toEqual(['2:11 schedule.input needs "sku" (the schedule input is the body of scheduled runs)'])
  })

  it('keeps disabled schedules', () => {
    const result = check(`${START}    next: done\n  - id: done\n    type: end\n    name: Done\n`, 'schedule: { cron: "@weekly", enabled: false }\n')
    expect(result.flow?.schedule).toEqual({ cron: '@weekly', enabled: false, timezone: 'UTC', input: {}, catchUp: 'none', catchUpMinutes: 60 })
  })
})
