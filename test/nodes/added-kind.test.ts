// Issue 12: a node kind is one file plus one registry line. Two kinds written in test/fixtures/kinds/
// (one that branches, one that ends the run) are registered through the registry's public function
// and work end to end: `validate` (settings schema and the kind's own checks, at file:line:column),
// runs through the Run API, the published flow schema and the OpenAPI document.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getNodeKind, nodeKinds, registerNodeKind } from '../../src/nodes/registry.js'
import { buildFlowSchema } from '../../src/project/schema.js'
import { validateProject } from '../../src/project/validate.js'
import { compileShapeSchema } from '../../src/project/ajv.js'
import { generateOpenApi } from '../../src/openapi/generate.js'
import { loadProject } from '../../src/project/load.js'
import { redirectNode } from '../fixtures/kinds/redirect.js'
import { sumNode } from '../fixtures/kinds/sum.js'
import { cleanupTempDirs, makeTempDir } from '../helpers.js'
import { jsonPost, startTestServer, type TestServer } from '../http/setup.js'

const BALANCE_FLOW = `name: Balance
nodes:
  - id: start
    type: start
    method: post
    inputs:
      body:
        type: object
        required: [credit, debit]
        properties: { credit: { type: number }, debit: { type: number } }
    next: total
  - id: total
    type: sum
    name: Total
    values: ["{{start.credit}}", "{{= -start.debit }}", 0.5]
    round: 1
    next: { positive: ok, negative: away }
  - id: ok
    type: end
    status: 200
    body: { total: "{{total.total}}" }
  - id: away
    type: redirect
    location: "https://example.com/top-up?missing={{total.total}}"
`

beforeAll(() => {
  registerNodeKind(sumNode)
  registerNodeKind(redirectNode)
})

afterAll(cleanupTempDirs)

describe('registerNodeKind', () => {
  it('adds the kind (with retry and onError for a non-terminating kind) and refuses a taken type', () => {
    expect(getNodeKind('sum')?.execute).toBe(sumNode.execute)
    const properties = getNodeKind('sum')!.settingsSchema.properties as Record<string, unknown>
    expect(Object.keys(properties)).toEqual(expect.arrayContaining(['values', 'round', 'retry', 'onError']))
    expect(Object.keys(getNodeKind('redirect')!.settingsSchema.properties as object)).not.toContain('onError')
    expect(() => registerNodeKind(sumNode)).toThrow('node kind "sum" is already registered')
    expect(() => registerNodeKind({ ...redirectNode, type: 'Bad type' })).toThrow('must be a word')
  })
})

async function projectWith(flows: Record<string, string>): Promise<string> {
  const dir = await makeTempDir('flowctl-kind-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: kinds\nname: Kinds\n')
  for (const [name, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', name), text)
  return dir
}

describe('validate', () => {
  it('accepts a flow that uses the added kinds', async () => {
    const result = await validateProject(await projectWith({ 'balance.yaml': BALANCE_FLOW }))
    expect(result.problems).toEqual([])
    expect(result.ok).toBe(true)
  })

  it("rejects wrong settings by the kind's schema and by its own check, at file:line:column", async () => {
    const broken = BALANCE_FLOW.replace('values: ["{{start.credit}}", "{{= -start.debit }}", 0.5]', 'values: ["{{start.credit}}", "12", 0.5]').replace(
      '    location: "https://example.com/top-up?missing={{total.total}}"',
      '    location: ""\n    next: ok',
    )
    const wrongType = BALANCE_FLOW.replace('name: Balance', 'name: Wrong').replace('    round: 1', '    round: 9\n    rounding: up')
    const result = await validateProject(await projectWith({ 'broken.yaml': broken, 'wrong.yaml': wrongType }))
    expect(result.ok).toBe(false)
    const shown = result.problems.map((p) => [p.file, p.line, p.column, p.message])
    expect(shown).toEqual([
      ['flows/broken.yaml', 15, 34, 'node "total": values: "12" is text; write a number or a {{ reference }}'],
      ['flows/broken.yaml', 24, 15, 'node "away": location must not be empty'],
      ['flows/broken.yaml', 25, 5, 'node "away": a redirect node ends the run, so it has no next; remove it'],
      ['flows/wrong.yaml', 16, 12, 'node "total": round must be <= 6'],
      ['flows/wrong.yaml', 17, 5, expect.stringContaining('node "total": "rounding" is not a setting of a sum node')],
    ])
  })
})

describe('a run', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ flows: { 'balance.yaml': BALANCE_FLOW } })
  })
  afterAll(() => server.close())

  it('executes the added kinds through the Run API: a branch by its port, an answer by the terminating kind', async () => {
    const traced = await server.request('/api/run/shop/balance?_trace=1', jsonPost({ credit: 10, debit: 4.25 }))
    const body = (await traced.json()) as {
      response: { status: number; body: unknown }
      trace: { steps: { nodeId: string; port: string | null; output: unknown }[] }
    }
    expect(body.response).toEqual({ status: 200, body: { total: 6.3 } })
    expect(body.trace.steps.map((step) => [step.nodeId, step.port])).toEqual([
      ['start', 'out'],
      ['total', 'positive'],
      ['ok', null],
    ])
    expect(body.trace.steps[1]!.output).toEqual({ total: 6.3 })

    const negative = await server.request('/api/run/shop/balance', jsonPost({ credit: 1, debit: 4 }))
    expect(negative.status).toBe(303)
    expect(negative.headers.get('location')).toBe('https://example.com/top-up?missing=-2.5')

    const failing = await server.request('/api/run/shop/balance', jsonPost({ credit: 1e308, debit: -1e308 }))
    expect(failing.status).toBe(500)
    expect(await failing.json()).toMatchObject({ ok: false, errors: ['node total failed'], nodeId: 'total' })
  })

  it('documents what the terminating kind answers in the OpenAPI document', async () => {
    const project = await loadProject(server.dir, { env: {} })
    const operation = generateOpenApi(project, { serverUrl: 'http://localhost' }).paths['/api/run/shop/balance']!.post!
    expect(operation.responses['200']!.content!['application/json']!.schema).toEqual({})
    expect(operation.responses['303']!.headers).toHaveProperty('Location')
    expect(operation.responses).not.toHaveProperty('204') // every port of sum leads somewhere
  })
})

describe('the published flow schema', () => {
  it('lists the added kinds with their settings, and the schema accepts and rejects their nodes', () => {
    const schema = buildFlowSchema()
    const defs = schema.$defs as Record<string, { properties?: Record<string, unknown> }>
    expect((defs.node!.properties!.type as { enum: string[] }).enum).toEqual([...nodeKinds.keys()])
    expect(defs.sumNode!.properties).toHaveProperty('values')
    expect(defs.redirectNode!.properties).not.toHaveProperty('next')
    const validate = compileShapeSchema(schema)
    const flow = (total: Record<string, unknown>) => ({
      nodes: [
        { id: 's', type: 'start', next: 't' },
        { id: 't', type: 'sum', ...total },
      ],
    })
    expect(validate(flow({ values: [1, 2] }))).toBe(true)
    expect(validate(flow({ values: [] }))).toBe(false)
    expect(validate(flow({ values: [1], rounding: 'up' }))).toBe(false)
  })
})
