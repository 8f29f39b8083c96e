// The public API (src/index.ts, `import … from 'flowctl'`): the exact list of runtime exports, and one
// program using them the way an embedding tool would: load, validate, run, record, read back,
// generate the OpenAPI document, tick, test and serve the example project.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import * as flowctl from '../src/index.js'
import { cleanupTempDirs, copyFixture, ROOT } from './helpers.js'

afterAll(cleanupTempDirs)

describe('public API', () => {
  it('exports exactly the documented names', () => {
    expect(Object.keys(flowctl).sort()).toEqual(
      [
        'ERROR_CATALOG',
        'FlowctlError',
        'createApp',
        'defineNodeKind',
        'formatProblem',
        'generateOpenApi',
        'isFlowctlError',
        'loadProject',
        'main',
        'openProjectStore',
        'openStore',
        'registerNodeKind',
        'resolveDatabase',
        'runFlow',
        'runTestPass',
        'runTick',
        'startRuntime',
        'validateProject',
      ].sort(),
    )
  })

  it('the built package exports the same names', async () => {
    const built = (await import(join(ROOT, 'dist', 'index.js'))) as Record<string, unknown>
    expect(Object.keys(built).sort()).toEqual(Object.keys(flowctl).sort())
  })

  it('loads, runs, records, reads back, generates and serves the example project', async () => {
    const dir = await copyFixture('example')
    expect((await flowctl.validateProject(dir, { env: {} })).ok).toBe(true)
    const project = await flowctl.loadProject(dir, { env: {} })
    const flow = project.flows.get('quote')
    if (!flow) throw new Error('the example has a quote flow')

    const store = await flowctl.openProjectStore(project, { env: {} })
    try {
      const outcome = await flowctl.runFlow({
        project,
        flow,
        store,
        trigger: 'cli',
        method: 'POST',
        input: { body: { items: [{ sku: 'A', price: 2.5, qty: 2 }] } },
      })
      expect(outcome).toMatchObject({ kind: 'response', status: 200, body: { total: 5, currency: 'EUR' } })
      const [newest] = await store.history.listRuns({ projectId: 'shop', limit: 1 })
      expect(newest).toMatchObject({ id: outcome.kind === 'response' ? outcome.runId : '', flow: 'quote', status: 'success' })
    } finally {
      await store.close()
    }

    const document = flowctl.generateOpenApi(project, { serverUrl: 'http://localhost:3000' })
    expect(document.openapi).toBe('3.0.3')
    expect(JSON.parse(await readFile(join(dir, 'openapi.json'), 'utf8')).paths).toEqual(JSON.parse(JSON.stringify(document.paths)))

    const runtime = await flowctl.startRuntime([dir], { env: {}, log: () => {}, watch: false })
    try {
      const app = flowctl.createApp(runtime.workspace, { quiet: true, usersFile: join(dir, 'no-users.yaml'), trustProxy: false })
      const answer = await app.fetch(
        new Request('http://localhost/api/run/shop/quote', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"items":[{"sku":"B","price":1}]}',
        }),
      )
      expect(answer.status).toBe(200)
      expect(await answer.json()).toMatchObject({ total: 1, firstSku: 'B' })
    } finally {
      await runtime.close()
    }
  })

  it('errors are FlowctlErrors with a catalog code', async () => {
    const error = await flowctl.loadProject(join(ROOT, 'no-such-project')).catch((caught: unknown) => caught)
    expect(flowctl.isFlowctlError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'PROJECT_NOT_FOUND' })
    expect(flowctl.ERROR_CATALOG.PROJECT_NOT_FOUND).toBeDefined()
  })
})
