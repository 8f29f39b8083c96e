import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newRunId, runFlow } from '../../src/flow/engine.js'
import type { RunOptions, RunOutcome } from '../../src/model/run.js'
import type { Project } from '../../src/model/project.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'
import { closedPortUrl, startLocalServer, type LocalServer } from '../nodes/local-server.js'
import { buildFlow, buildProject, type NodeSpec } from './build.js'
import { loadExample } from './example.js'

let store: Store
let project: Project
let server: LocalServer
const NOW = new Date('2024-05-01T10:00:00.000Z')

beforeAll(async () => {
  store = await openSqliteStore(':memory:')
  project = await loadExample()
  server = await startLocalServer()
})
afterAll(async () => {
  await store.close()
  await server.close()
})

function run(slug: string, input: RunOptions['input'], extra: Partial<RunOptions> = {}): Promise<RunOutcome> {
  const target = extra.project ?? project
  const flow = target.flows.get(slug)
  if (!flow) throw new Error(`no flow ${slug}`)
  return runFlow({ project: target, flow, store, trigger: 'http', method: 'POST', input, now: () => NOW, ...extra })
}

function expectKind<K extends RunOutcome['kind']>(outcome: RunOutcome, kind: K): Extract<RunOutcome, { kind: K }> {
  expect(outcome.kind, JSON.stringify(outcome)).toBe(kind)
  return outcome as Extract<RunOutcome, { kind: K }>
}

describe('runFlow on the example project', () => {
  it('create-order: 201 with the inserted id, the document stored, the run recorded', async () => {
    const outcome = expectKind(await run('create-order', { body: { sku: 'A-1', qty: 2 }, headers: { 'x-tenant': 'acme' } }), 'response')
    expect(outcome.status).toBe(201)
    const body = outcome.body as { id: string; ok: boolean }
    expect(body).toEqual({ id: expect.any(String), ok: true })
    expect(await store.documents.get('shop', 'orders', body.id)).toEqual({ _id: body.id, sku: 'A-1', qty: 2, tenant: 'acme' })

    expect(outcome.record).toEqual({
      id: outcome.runId,
      projectId: 'shop',
      flow: 'create-order',
      trigger: 'http',
      method: 'POST',
      startedAt: '2024-05-01T10:00:00.000Z',
      durationMs: expect.any(Number),
      status: 'success',
      httpStatus: 201,
      ports: [{ nodeId: 'check', port: 'false' }],
      failedNodeId: null,
      error: null,
      scheduledFor: null,
      replayOf: null,
      resumedFrom: null,
    })
    expect(Object.keys(outcome.record)).toEqual([
      'id',
      'projectId',
      'flow',
      'trigger',
      'method',
      'startedAt',
      'durationMs',
      'status',
      'httpStatus',
      'ports',
      'failedNodeId',
      'error',
      'scheduledFor',
      'replayOf',
      'resumedFrom',
    ])
    expect(await store.history.getRun('shop', outcome.runId)).toMatchObject(outcome.record)
    expect(outcome.trace).toBeUndefined()
  })

  it('create-order: a big order takes the true branch (202) and the header default applies', async () => {
    const outcome = expectKind(await run('create-order', { body: { sku: 'B', qty: 50 } }), 'response')
    expect(outcome.status).toBe(202)
    const body = outcome.body as { id: string }
    expect(body).toEqual({ id: expect.any(String), ok: true, review: true })
    expect(await store.documents.get('shop', 'orders', body.id)).toEqual({ _id: body.id, sku: 'B', qty: 50, tenant: 'default', review: true })
    expect(outcome.record.ports).toEqual([{ nodeId: 'check', port: 'true' }])
  })

  it('invalid inputs: exact error strings, nothing recorded', async () => {
    const before = await store.history.listRuns({ projectId: 'shop', limit: 1000 })
    const outcome = await run('create-order', { body: { sku: '', qty: 0 } })
    expect(outcome).toEqual({ kind: 'invalid', errors: ['body/sku: must NOT have fewer than 1 characters', 'body/qty: must be >= 1'] })
    expect(await run('create-order', {})).toEqual({
      kind: 'invalid',
      errors: ["body/sku: must have required property 'sku'", "body/qty: must have required property 'qty'"],
    })
    expect(await run('create-order', { body: { sku: 'a', qty: '3' } })).toEqual({ kind: 'invalid', errors: ['body/qty: must be integer'] })
    expect(await store.history.listRuns({ projectId: 'shop', limit: 1000 })).toHaveLength(before.length)
  })

  it('nightly-cleanup: an End with status 204, no body; run values reach the document', async () => {
    const outcome = expectKind(await run('nightly-cleanup', { body: { reason: 'nightly' } }, { trigger: 'cron', method: 'CRON' }), 'response')
    expect(outcome).toMatchObject({ status: 204, body: null, headers: {} })
    expect(outcome.record).toMatchObject({ trigger: 'cron', method: 'CRON', status: 'success', httpStatus: 204, ports: [] })
    const logged = await store.history.listRuns({ projectId: 'shop', flow: 'nightly-cleanup' })
    expect(logged[0]?.id).toBe(outcome.runId)
  })

  it('order-status: switch ports, coerced query with default, 404 from an End', async () => {
    const open = expectKind(await run('order-status', { path: { state: 'open' } }, { method: 'GET' }), 'response')
    expect(open).toMatchObject({ status: 200, body: { state: 'open', message: 'Order is open', verbose: false } })
    expect(open.record.ports).toEqual([{ nodeId: 'route', port: 'open' }])
    const verbose = expectKind(await run('order-status', { path: { state: 'shipped' }, query: { verbose: 'true' } }), 'response')
    expect(verbose.body).toMatchObject({ state: 'shipped', verbose: true })
    const lost = expectKind(await run('order-status', { path: { state: 'lost' } }), 'response')
    expect(lost).toMatchObject({ status: 404, body: { state: 'lost', message: 'No such state: lost' } })
    expect(lost.record).toMatchObject({ status: 'success', httpStatus: 404, ports: [{ nodeId: 'route', port: 'unknown' }] })
  })

  it('quote: array items and a whole-reference body', async () => {
    const outcome = expectKind(await run('quote', { body: { items: [{ sku: 'X', price: 2.5 }] } }), 'response')
    expect(outcome.body).toEqual({ firstSku: 'X', firstPrice: 2.5, label: 'Quote for X in EUR', currency: 'EUR', total: 2.5 })
  })

  it('fetch-status: calls a real server', async () => {
    const outcome = expectKind(await run('fetch-status', { body: { url: `${server.url}/text` } }), 'response')
    expect(outcome).toMatchObject({ status: 200, body: { status: 418 } })
  })

  it('a failing node (http to a closed port) fails the run with its id, recorded as an error', async () => {
    const url = await closedPortUrl()
    const outcome = expectKind(await run('fetch-status', { body: { url } }, { trace: true }), 'failed')
    expect(outcome).toMatchObject({ nodeId: 'call', error: 'HTTP GET request network error (ECONNREFUSED)' })
    expect(outcome.record).toMatchObject({ status: 'error', httpStatus: 500, failedNodeId: 'call', error: outcome.error, ports: [] })
    expect(await store.history.getRun('shop', outcome.runId)).toMatchObject(outcome.record)
    expect(outcome.trace?.steps.map((s) => [s.nodeId, s.port])).toEqual([
      ['start', 'out'],
      ['call', null],
    ])
    // A failed http step keeps its request beside the reason; no answer came (SPEC §21).
    expect(outcome.trace?.steps[1]?.output).toEqual({ error: outcome.error, http: { method: 'GET', url: new URL(url).href, status: null, body: null } })
  })

  it('a run longer than runTimeoutMs fails with "timeout" on the running node', async () => {
    const slow = await loadExample({ runTimeoutMs: 200 })
    const began = Date.now()
    const outcome = expectKind(await run('fetch-status', { body: { url: `${server.url}/hang` } }, { project: slow }), 'failed')
    expect(Date.now() - began).toBeLessThan(3000)
    expect(outcome).toMatchObject({ nodeId: 'call', error: 'timeout' })
    expect(outcome.record).toMatchObject({ status: 'error', httpStatus: 500, failedNodeId: 'call', error: 'timeout' })
    expect(outcome.record.durationMs).toBeGreaterThanOrEqual(150)
  })

  it("the caller's signal stops the run", async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 50)
    const outcome = expectKind(await run('fetch-status', { body: { url: `${server.url}/hang` } }, { signal: controller.signal }), 'failed')
    expect(outcome).toMatchObject({ nodeId: 'call', error: 'aborted' })
  })

  it('trace: every step with its port and output', async () => {
    const outcome = expectKind(await run('create-order', { body: { sku: 'T', qty: 1 } }, { trace: true }), 'response')
    const trace = outcome.trace!
    expect(trace.runId).toBe(outcome.runId)
    expect(trace.durationMs).toBeGreaterThanOrEqual(0)
    expect(trace.steps.map(({ nodeId, type, name, port }) => ({ nodeId, type, name, port }))).toEqual([
      { nodeId: 'start', type: 'start', name: 'Start', port: 'out' },
      { nodeId: 'check', type: 'if', name: 'Big Order', port: 'false' },
      { nodeId: 'save', type: 'insert', name: 'Result', port: 'out' },
      { nodeId: 'done', type: 'end', name: 'Done', port: null },
    ])
    expect(trace.steps[0]?.output).toEqual({ sku: 'T', qty: 1, 'x-tenant': 'default' })
    expect(trace.steps[3]?.output).toEqual({ status: 201, body: outcome.body, headers: {} })
  })
})

describe('runFlow on hand-built flows', () => {
  const secrets = { API_KEY: 'key-0123456789' }
  const start: NodeSpec = { id: 'start', type: 'start', name: 'Start', inputs: {} }

  function project1(nodes: NodeSpec[], options: { limits?: Record<string, number> } = {}) {
    const flow = buildFlow('Hand', nodes)
    return { flow, project: buildProject([flow], { secrets, ...options }) }
  }

  it('masks secrets in trace outputs and in errors, not in the response', async () => {
    const { flow, project } = project1([
      { ...start, next: 'keep' },
      { id: 'keep', type: 'set', name: 'Keep', values: { auth: 'Bearer ${secrets.API_KEY}', raw: '${secrets.API_KEY}' }, next: 'done' },
      { id: 'done', type: 'end', name: 'Done', body: '{{keep.raw}}' },
    ])
    const outcome = await runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: {}, trace: true })
    const ok = expectKind(outcome, 'response')
    expect(ok.trace?.steps[1]?.output).toEqual({ auth: 'Bearer ***', raw: '***' })
    expect(ok.trace?.steps[2]?.output).toEqual({ status: 200, body: '***', headers: {} })
    expect(ok.body).toBe('key-0123456789')
    expect(JSON.stringify(ok.trace)).not.toContain('key-0123456789')

    const failing = project1([
      { ...start, next: 'call' },
      { id: 'call', type: 'http', name: 'Call', url: 'not a url ${secrets.API_KEY}' },
    ])
    const failed = expectKind(await runFlow({ ...failing, store, trigger: 'cli', method: 'CLI', input: {}, trace: true }), 'failed')
    expect(failed.error).toBe('HTTP GET request has an invalid URL "not a url ***"')
    expect(JSON.stringify(await store.history.getRun('test', failed.runId))).not.toContain('key-0123456789')
  })

  it('an unset secret fails the node, naming the secret', async () => {
    const { flow, project } = project1([
      { ...start, next: 'keep' },
      { id: 'keep', type: 'set', name: 'Keep', values: { a: '${secrets.MISSING}' } },
    ])
    const failed = expectKind(await runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: {} }), 'failed')
    expect(failed).toMatchObject({ nodeId: 'keep', error: expect.stringMatching(/^secret MISSING is not set/) })
  })

  it('stops a loop whose ports never wait', async () => {
    const { flow, project } = project1([
      { ...start, next: 'again' },
      { id: 'again', type: 'set', name: 'Again', values: {}, next: 'again' },
    ])
    const failed = expectKind(await runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: {} }), 'failed')
    expect(failed).toMatchObject({ nodeId: 'again', error: expect.stringContaining('10000 steps') })
  })

  it('a port leading to a missing node fails on the node whose port it is', async () => {
    const { flow, project } = project1([{ ...start, next: 'ghost' }])
    const failed = expectKind(await runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: {} }), 'failed')
    expect(failed).toMatchObject({ nodeId: 'start', error: 'port "out" leads to node "ghost", which does not exist' })
  })

  it('no End node reached: 204 without a body', async () => {
    const { flow, project } = project1([
      { ...start, next: 'keep' },
      { id: 'keep', type: 'set', name: 'Keep', values: { a: 1 } },
    ])
    const outcome = expectKind(await runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: {} }), 'response')
    expect(outcome).toMatchObject({ status: 204, body: undefined, headers: {} })
    expect(outcome.record).toMatchObject({ status: 'success', httpStatus: 204, ports: [] })
  })

  it('a flow without a Start node cannot be run', async () => {
    const { flow, project } = project1([{ id: 'only', type: 'set', name: 'Only', values: {} }])
    await expect(runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: {} })).rejects.toMatchObject({ code: 'FLOW_NOT_FOUND' })
  })

  it('when recording fails, runFlow rejects (the caller answers 503)', async () => {
    const closed = await openSqliteStore(':memory:')
    await closed.close()
    const { flow, project } = project1([start])
    await expect(runFlow({ project, flow, store: closed, trigger: 'cli', method: 'CLI', input: {} })).rejects.toThrow()
  })
})

describe('newRunId', () => {
  it('is unique and sorts by creation order', () => {
    const ids = Array.from({ length: 2000 }, () => newRunId())
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    expect(ids[0]).toMatch(/^[0-9a-z]{32}$/)
  })
})
