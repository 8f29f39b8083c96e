// A project of hundreds of flows, loaded the fast way (js-yaml, no Document kept, nothing compiled
// before a request needs it): validate still reports every problem at its file:line:column, and the
// first request to a flow not compiled yet is validated and rejected as before.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { validateProject } from '../../src/project/validate.js'
import { loadProject } from '../../src/project/load.js'
import { cleanupTempDirs, copyFixture } from '../helpers.js'
import { jsonPost, startTestServer, type TestServer } from '../http/setup.js'

const FLOWS = 300

/** An order-like flow; `change` edits its lines to break it in one known place. */
function flowText(name: string, change: (lines: string[]) => void = () => {}): string {
  const lines = [
    `name: ${name}`,
    'nodes:',
    '  - id: start',
    '    type: start',
    '    auth: { type: bearer, token: "${secrets.ORDERS_TOKEN}" }',
    '    inputs:',
    '      body: { type: object, required: [qty], properties: { qty: { type: integer, minimum: 1 } } }',
    '    next: done',
    '  - id: done',
    '    type: end',
    '    status: 201',
    '    body: { ok: true, qty: "{{start.qty}}" }',
  ]
  change(lines)
  return lines.join('\n') + '\n'
}

const fileOf = (i: number) => `many-${String(i).padStart(4, '0')}.yaml`

/** Every generated flow file; five of them broken, each in its own way. */
function generatedFlows(): Record<string, string> {
  const flows: Record<string, string> = {}
  for (let i = 0; i < FLOWS; i++) flows[fileOf(i)] = flowText(`Many ${i}`)
  flows[fileOf(50)] = flowText('Many 50', (l) => (l[9] = '    type: ned'))
  // A tab inside a quoted value: read by yaml (the reference path), and a `next` to nowhere.
  flows[fileOf(100)] = flowText('Many 100', (l) => ((l[7] = '    next: nowhere'), (l[11] = '    body: { ok: true, note: "a\tb" }')))
  flows[fileOf(150)] = flowText('Same Name')
  flows[fileOf(151)] = flowText('Same Name')
  flows[fileOf(200)] = flowText('Many 200', (l) => (l[4] = '    auth: { type: bearer, token: "${secrets.MISSING_TOKEN}" }'))
  flows[fileOf(250)] = flowText('Many 250', (l) => (l[11] = '    body: { ok: true'))
  return flows
}

afterAll(cleanupTempDirs)

describe('a large project', () => {
  it('validate reports every problem of every file, with file:line:column', async () => {
    const dir = await copyFixture('example')
    for (const [name, text] of Object.entries(generatedFlows())) await writeFile(join(dir, 'flows', name), text)
    const { problems } = await validateProject(dir, { env: {} })
    const many = problems.filter((p) => p.file.startsWith('flows/many-'))
    const shown = many.map((p) => `${p.file}:${p.line}:${p.column} ${p.severity}: ${p.message}`)
    expect(shown).toEqual([
      // SPEC §20: the generated Starts keep the seed's operationId and name; one warning per shared name.
      expect.stringMatching(
        /^flows\/many-0000\.yaml:3:5 warning: 296 operations would share the OpenAPI operationId "start_post" \(flows\/many-0000\.yaml, .* and 293 more\)/,
      ),
      expect.stringMatching(/^flows\/many-0000\.yaml:3:5 warning: 295 OpenAPI operations share the summary "start"/),
      expect.stringMatching(/^flows\/many-0050\.yaml:10:11 error: node "done": "ned" is not a node type \(did you mean "end"\?\)/),
      'flows/many-0100.yaml:8:11 error: node "start": next points to "nowhere", which is not a node id of this flow',
      'flows/many-0100.yaml:9:9 error: node "done" cannot be reached from the start node; connect it with a next, or remove it',
      'flows/many-0150.yaml:1:7 error: the flow slug "same-name" is used by both flows/many-0150.yaml and flows/many-0151.yaml; give each flow its own name',
      'flows/many-0151.yaml:1:7 error: the flow slug "same-name" is used by both flows/many-0150.yaml and flows/many-0151.yaml; give each flow its own name',
      'flows/many-0200.yaml:5:34 warning: node "start": secret "MISSING_TOKEN" is not defined in .env; it must be supplied at run time (FLOWCTL_SECRET_MISSING_TOKEN)',
      'flows/many-0250.yaml:12:11 error: YAML syntax error: this "{" is never closed; add "}" where it should end',
    ])
    const project = await loadProject(dir, { env: {} })
    const manyFlows = [...project.flows.values()].filter((flow) => flow.file.startsWith('flows/many-'))
    const missing = Object.keys(generatedFlows()).filter((name) => !manyFlows.some((flow) => flow.file === `flows/${name}`))
    expect(missing).toEqual([fileOf(50), fileOf(100), fileOf(150), fileOf(151), fileOf(250)]) // the file with only a warning is served
    expect(manyFlows.at(-1)?.nodes.map((node) => node.pos)).toEqual([
      { line: 3, column: 5 },
      { line: 9, column: 5 },
    ])
  })

  describe('served', () => {
    let server: TestServer
    afterAll(() => server?.close())

    it('answers the first request to a flow nothing has compiled yet: 400 for a bad body, 201 for a good one', async () => {
      server = await startTestServer({ flows: generatedFlows() })
      const bearer = { authorization: 'Bearer dev-orders-token-change-me' }
      const invalid = await server.request(`/api/run/shop/many-${FLOWS - 1}`, jsonPost({ qty: 0 }, bearer))
      expect(invalid.status).toBe(400)
      expect(await invalid.json()).toEqual({ ok: false, errors: ['body/qty: must be >= 1'] })
      const missing = await server.request(`/api/run/shop/many-${FLOWS - 2}`, jsonPost({}, bearer))
      expect(missing.status).toBe(400)
      expect(await missing.json()).toEqual({ ok: false, errors: ["body/qty: must have required property 'qty'"] })
      const ok = await server.request(`/api/run/shop/many-${FLOWS - 2}`, jsonPost({ qty: 3 }, bearer))
      expect(ok.status).toBe(201)
      expect(await ok.json()).toEqual({ ok: true, qty: 3 })
    })
  })
})
