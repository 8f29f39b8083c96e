// Retry from the failed step (replayRun with from: 'failed', resume-from.ts and the engine's hook)
// against a real SQLite store, projects loaded by the real loader and a counting upstream: the steps
// before the failed node are reused (no second call, no second insert), the failed node and what
// follows run with the flow's current version, and every run that cannot be retried so is refused
// with REPLAY_UNAVAILABLE before anything runs.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import { replayRun, type Replay } from '../../src/flow/replay.js'
import type { RunOutcome } from '../../src/model/run.js'
import type { Project } from '../../src/model/project.js'
import type { Store } from '../../src/model/store.js'
import { loadProject } from '../../src/project/load.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { cleanupTempDirs, makeTempDir } from '../helpers.js'

/** Counts the requests per path. `/count/<key>` answers `{ n }`; `/flip/<key>` answers 500 the first time, then 200. */
interface Upstream {
  url: string
  hits: Map<string, number>
  close(): Promise<void>
}

async function startUpstream(): Promise<Upstream> {
  const hits = new Map<string, number>()
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!
    const n = (hits.get(path) ?? 0) + 1
    hits.set(path, n)
    const status = path.startsWith('/flip/') && n === 1 ? 500 : 200
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ n, path }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

let upstream: Upstream
let store: Store

beforeAll(async () => {
  upstream = await startUpstream()
})
afterEach(async () => {
  await store?.close()
})
afterAll(async () => {
  await upstream.close()
  await cleanupTempDirs()
})

/** A project folder with these flow files (and settings lines added to flowctl.yaml), loaded; a fresh store. */
async function projectWith(flows: Record<string, string>, options: { settings?: string; env?: string } = {}): Promise<{ dir: string; project: Project }> {
  const dir = await makeTempDir('flowctl-retry-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), `projectId: shop\nname: Shop\n${options.settings ?? ''}`)
  if (options.env !== undefined) await writeFile(join(dir, '.env'), options.env)
  for (const [name, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', name), text)
  store = await openSqliteStore(':memory:')
  return { dir, project: await loadProject(dir, { env: {} }) }
}

/** The flow file again with changed text, and the project loaded again (the flow's current version). */
async function changeFlow(dir: string, name: string, text: string): Promise<Project> {
  await writeFile(join(dir, 'flows', name), text)
  return loadProject(dir, { env: {} })
}

async function runOnce(project: Project, slug: string, body: unknown = {}): Promise<Extract<RunOutcome, { kind: 'failed' | 'response' }>> {
  const flow = project.flows.get(slug)!
  const outcome = await runFlow({ project, flow, store, trigger: 'http', method: 'POST', input: { body } })
  if (outcome.kind === 'invalid') throw new Error(outcome.errors.join('; '))
  return outcome
}

function retry(project: Project, runId: string): Promise<Replay> {
  return replayRun({ project, store, runId, trigger: 'cli', method: 'CLI', trace: true, from: 'failed' })
}

/** The refusal `retry` throws: its code and message. */
async function refusal(project: Project, runId: string): Promise<{ code: string; message: string }> {
  const before = (await store.history.listRuns({ projectId: 'shop', limit: 1000 })).length
  const error = (await retry(project, runId).then(
    () => null,
    (e: unknown) => e,
  )) as { code: string; message: string } | null
  expect(error, 'a refusal').not.toBeNull()
  // Nothing ran: no new record.
  expect(await store.history.listRuns({ projectId: 'shop', limit: 1000 })).toHaveLength(before)
  return { code: error!.code, message: error!.message }
}

/** Order: read an upstream, insert, then a check that fails the first time (500 with failOnStatus). */
const order = (url: string, key: string, check = `${url}/flip/${key}`) => `name: Order
nodes:
  - id: start
    type: start
    name: Start
    inputs: { body: { type: object, properties: { sku: { type: string } } } }
    next: fetch
  - { id: fetch, type: http, name: Fetch, method: get, url: "${url}/count/${key}", next: save }
  - { id: save, type: insert, name: Save, collection: orders, document: { sku: "{{start.sku}}", n: "{{fetch.body.n}}" }, next: check }
  - { id: check, type: http, name: Check, method: get, url: "${check}", failOnStatus: true, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { id: "{{save.insertedId}}", fetched: "{{fetch.body.n}}", checked: "{{check.body.n}}" } }
`

describe('retry from the failed step', () => {
  it('reuses the steps before the failed node: the upstream is called once and the document inserted once', async () => {
    const { project } = await projectWith({ 'order.yaml': order(upstream.url, 'a') })
    const failed = await runOnce(project, 'order', { sku: 'A-1' })
    expect(failed).toMatchObject({ kind: 'failed', nodeId: 'check' })
    expect(upstream.hits.get('/count/a')).toBe(1)

    const { outcome } = await retry(project, failed.runId)
    expect(outcome.kind).toBe('response')
    if (outcome.kind !== 'response') return
    // The step before the failure ran once in total; the failed node ran again and now passed.
    expect(upstream.hits.get('/count/a')).toBe(1)
    expect(upstream.hits.get('/flip/a')).toBe(2)
    const originalId = (await store.history.getRun('shop', failed.runId))!.trace!.steps.find((s) => s.nodeId === 'save')!.output as { insertedId: string }
    expect(outcome.status).toBe(201)
    expect(outcome.body).toEqual({ id: originalId.insertedId, fetched: 1, checked: 2 })
    // One document: the failed run's, committed with its record; the retry inserted nothing.
    const listed = await store.documents.listCollections('shop')
    expect(listed).toEqual([{ collection: 'orders', count: 1 }])
    expect(await store.documents.get('shop', 'orders', originalId.insertedId)).toMatchObject({ sku: 'A-1', n: 1 })

    expect(outcome.record).toMatchObject({ replayOf: failed.runId, resumedFrom: 'check', status: 'success', httpStatus: 201 })
    const stored = (await store.history.getRun('shop', outcome.runId))!
    expect(stored).toMatchObject({ replayOf: failed.runId, resumedFrom: 'check' })
    expect(stored.trace!.steps.map((s) => [s.nodeId, s.reused ?? false])).toEqual([
      ['start', false],
      ['fetch', true],
      ['save', true],
      ['check', false],
      ['done', false],
    ])
    expect((await store.history.listRuns({ projectId: 'shop', limit: 5 }))[0]).toMatchObject({ id: outcome.runId, resumedFrom: 'check' })
  })

  it("executes from the failed node with the flow's current version (the fixed flow)", async () => {
    // A check against a port where nothing listens: it keeps failing until the flow is fixed.
    const { dir, project } = await projectWith({ 'order.yaml': order(upstream.url, 'b', 'http://127.0.0.1:1/refused') })
    const failed = await runOnce(project, 'order', { sku: 'B-1' })
    expect(failed).toMatchObject({ kind: 'failed', nodeId: 'check' })
    const fixed = await changeFlow(dir, 'order.yaml', order(upstream.url, 'b', `${upstream.url}/count/fixed-b`))
    const { outcome } = await retry(fixed, failed.runId)
    expect(outcome).toMatchObject({ kind: 'response', status: 201, body: { fetched: 1, checked: 1 } })
    expect(upstream.hits.get('/count/b')).toBe(1)
    expect(upstream.hits.get('/count/fixed-b')).toBe(1)
  })

  it('a retry that fails again can be retried in turn: the reused steps are reused again', async () => {
    const { dir, project } = await projectWith({ 'order.yaml': order(upstream.url, 'c', 'http://127.0.0.1:1/refused') })
    const first = await runOnce(project, 'order', { sku: 'C-1' })
    const again = (await retry(project, first.runId)).outcome
    expect(again).toMatchObject({ kind: 'failed', nodeId: 'check', record: { replayOf: first.runId, resumedFrom: 'check' } })
    if (again.kind !== 'failed') return
    const fixed = await changeFlow(dir, 'order.yaml', order(upstream.url, 'c', `${upstream.url}/count/fixed-c`))
    const last = (await retry(fixed, again.runId)).outcome
    expect(last).toMatchObject({ kind: 'response', status: 201, record: { replayOf: again.runId, resumedFrom: 'check' } })
    expect(upstream.hits.get('/count/c')).toBe(1)
    expect(await store.documents.listCollections('shop')).toEqual([{ collection: 'orders', count: 1 }])
  })

  it('reuses a branch taken, an error branch, a retried step, and call and each steps whole; ports carry over', async () => {
    const url = upstream.url
    const { project } = await projectWith({
      'lookup.yaml': `name: Lookup
nodes:
  - { id: start, type: start, name: Start, inputs: { body: { type: object, properties: { k: { type: string } } } }, next: get }
  - { id: get, type: http, name: Get, method: get, url: "${url}/count/sub-{{start.k}}", next: done }
  - { id: done, type: end, name: Done, body: { n: "{{get.body.n}}" } }
`,
      'mixed.yaml': `name: Mixed
nodes:
  - { id: start, type: start, name: Start, next: flaky }
  - { id: flaky, type: http, name: Flaky, method: get, url: "${url}/flip/mixed-flaky", failOnStatus: true, retry: { attempts: 2, delayMs: 1 }, next: gate }
  - id: gate
    type: if
    name: Gate
    condition: { left: "{{flaky.body.n}}", op: eq, right: 2 }
    next: { true: broken, false: fail }
  - { id: broken, type: http, name: Broken, method: get, url: "http://127.0.0.1:1/x", onError: one, next: one }
  - { id: one, type: call, name: One, flow: lookup, input: { k: one }, next: many }
  - { id: many, type: each, name: Many, flow: lookup, items: [{ k: e1 }, { k: e2 }], next: fail }
  - { id: fail, type: http, name: Fail, method: get, url: "${url}/flip/mixed-fail", failOnStatus: true, next: done }
  - { id: done, type: end, name: Done, body: { one: "{{one.body.n}}", many: "{{many.results}}", gate: "{{gate.result}}", broken: "{{broken.error}}" } }
`,
    })
    const failed = await runOnce(project, 'mixed')
    expect(failed).toMatchObject({ kind: 'failed', nodeId: 'fail' })
    expect(failed.record.ports).toEqual([
      { nodeId: 'gate', port: 'true' },
      { nodeId: 'broken', port: 'error' },
    ])
    const counts = () => ['/flip/mixed-flaky', '/count/sub-one', '/count/sub-e1', '/count/sub-e2'].map((p) => upstream.hits.get(p))
    expect(counts()).toEqual([2, 1, 1, 1])

    const { outcome } = await retry(project, failed.runId)
    expect(outcome.kind).toBe('response')
    expect(counts()).toEqual([2, 1, 1, 1])
    expect(upstream.hits.get('/flip/mixed-fail')).toBe(2)
    if (outcome.kind !== 'response') return
    expect(outcome.body).toMatchObject({
      one: 1,
      many: [
        { status: 200, body: { n: 1 } },
        { status: 200, body: { n: 1 } },
      ],
      gate: true,
    })
    expect((outcome.body as { broken: string }).broken).toMatch(/./)
    expect(outcome.record.ports).toEqual([
      { nodeId: 'gate', port: 'true' },
      { nodeId: 'broken', port: 'error' },
    ])
    const steps = outcome.trace!.steps
    // Only the completed attempt of the retried node is reused; sub-flow traces stay under their step.
    expect(steps.filter((s) => s.reused).map((s) => s.nodeId)).toEqual(['flaky', 'gate', 'broken', 'one', 'many'])
    expect(steps.find((s) => s.nodeId === 'many')!.calls).toHaveLength(2)
  })
})

describe('retry from the failed step: refusals (409 REPLAY_UNAVAILABLE, nothing runs)', () => {
  it('a run that did not fail', async () => {
    const { project } = await projectWith({ 'order.yaml': order(upstream.url, 'ok', `${upstream.url}/count/ok-check`) })
    const done = await runOnce(project, 'order')
    expect(done.kind).toBe('response')
    const refused = await refusal(project, done.runId)
    expect(refused).toEqual({ code: 'REPLAY_UNAVAILABLE', message: expect.stringContaining('did not fail (its status is "success")') })
  })

  it('a run that kept no input or trace (history.keep: none), and one with an input but no trace', async () => {
    const { project } = await projectWith({ 'order.yaml': order(upstream.url, 'none', 'http://127.0.0.1:1/x') }, { settings: 'history: { keep: none }\n' })
    const failed = await runOnce(project, 'order')
    expect(await refusal(project, failed.runId)).toEqual({ code: 'REPLAY_UNAVAILABLE', message: expect.stringContaining('kept no input') })

    const record = { ...failed.record, id: `${failed.runId}x` }
    await store.history.recordRun(record, 100, { input: '{"body":{},"path":{},"query":{},"headers":{}}', trace: null })
    expect(await refusal(project, record.id)).toEqual({ code: 'REPLAY_UNAVAILABLE', message: expect.stringContaining('kept no trace') })
  })

  it('a step to reuse whose stored output was cut at limits.traceBytes', async () => {
    const big = 'x'.repeat(3000)
    const { project } = await projectWith(
      {
        'big.yaml': `name: Big
nodes:
  - { id: start, type: start, name: Start, next: fill }
  - { id: fill, type: set, name: Fill, values: { text: "${big}" }, next: check }
  - { id: check, type: http, name: Check, method: get, url: "http://127.0.0.1:1/x", next: done }
  - { id: done, type: end, name: Done }
`,
      },
      { settings: 'limits: { traceBytes: 1024 }\n' },
    )
    const failed = await runOnce(project, 'big')
    expect((await store.history.getRun('shop', failed.runId))!.trace!.cut).toBe(true)
    const refused = await refusal(project, failed.runId)
    expect(refused.message).toContain('the stored output of step "fill" was cut at limits.traceBytes')
  })

  it('a step to reuse whose stored output had a secret masked as ***', async () => {
    const { project } = await projectWith(
      {
        'secretive.yaml': `name: Secretive
nodes:
  - { id: start, type: start, name: Start, next: sign }
  - { id: sign, type: set, name: Sign, values: { auth: "Bearer \${secrets.API_KEY}" }, next: check }
  - { id: check, type: http, name: Check, method: get, url: "http://127.0.0.1:1/x", next: done }
  - { id: done, type: end, name: Done }
`,
      },
      { env: 'API_KEY=very-secret-key-123\n' },
    )
    const failed = await runOnce(project, 'secretive')
    expect(JSON.stringify((await store.history.getRun('shop', failed.runId))!.trace)).not.toContain('very-secret-key-123')
    expect((await refusal(project, failed.runId)).message).toContain('the stored output of step "sign" has a secret masked as ***')
  })

  it('a flow whose failed node is gone, whose way to it changed, or whose earlier node changed kind', async () => {
    const url = upstream.url
    const { dir, project } = await projectWith({ 'order.yaml': order(url, 'graph', 'http://127.0.0.1:1/x') })
    const failed = await runOnce(project, 'order')

    const gone = await changeFlow(
      dir,
      'order.yaml',
      `name: Order
nodes:
  - { id: start, type: start, name: Start, next: fetch }
  - { id: fetch, type: http, name: Fetch, method: get, url: "${url}/count/graph", next: done }
  - { id: done, type: end, name: Done }
`,
    )
    expect((await refusal(gone, failed.runId)).message).toContain('flow order no longer has that node')

    const detour = await changeFlow(
      dir,
      'order.yaml',
      order(url, 'graph', `${url}/count/x`)
        .replace('next: save }', 'next: audit }')
        .replace('  - { id: save', `  - { id: audit, type: set, name: Audit, values: { at: now }, next: save }\n  - { id: save`),
    )
    expect((await refusal(detour, failed.runId)).message).toContain('the flow changed before it: the run went from node "fetch" (port out) to node "save"')

    const retyped = await changeFlow(
      dir,
      'order.yaml',
      order(url, 'graph', `${url}/count/x`).replace(
        `{ id: fetch, type: http, name: Fetch, method: get, url: "${url}/count/graph", next: save }`,
        '{ id: fetch, type: set, name: Fetch, values: { body: { n: 7 } }, next: save }',
      ),
    )
    expect((await refusal(retyped, failed.runId)).message).toContain('node "fetch" is now a set node, not the http node')
    expect(upstream.hits.get('/count/graph')).toBe(1)
  })
})
