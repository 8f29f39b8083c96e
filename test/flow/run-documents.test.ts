// One commit per run (src/flow/run-documents.ts) through the real loader, engine and SQLite store:
// a run's inserts reach the store with its record, a node that reads after inserting sees the
// run's writes, and sub-flows' inserts are neither lost nor doubled.
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import type { Project } from '../../src/model/project.js'
import type { DocumentsPort, HistoryPort, RunDocument, Store } from '../../src/model/store.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { cleanupTempDirs, makeTempDir } from '../helpers.js'
import { projectFromText } from './project-from-text.js'

const BODY = 'inputs: { body: { type: object } }'

const FLOWS: Record<string, string> = {
  order: `
name: Order
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: save }
  - { id: save, type: insert, name: Save, collection: orders, document: { sku: "{{ start.sku }}" }, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { id: "{{ save.insertedId }}" } }
`,
  readback: `
name: Readback
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: save }
  - { id: save, type: insert, name: Save, collection: orders, document: { sku: "{{ start.sku }}", state: new }, next: mark }
  - { id: mark, type: update, name: Mark, collection: orders, documentId: "{{ save.insertedId }}", set: { state: paid }, next: load }
  - { id: load, type: get, name: Load, collection: orders, documentId: "{{ save.insertedId }}", next: { found: listed, missing: lost } }
  - { id: listed, type: find, name: Listed, collection: orders, filter: { sku: "{{ start.sku }}" }, next: done }
  - { id: done, type: end, name: Done, body: { loaded: "{{ load }}", count: "{{ listed.count }}" } }
  - { id: lost, type: end, name: Lost, status: 500, body: { lost: true } }
`,
  child: `
name: Child
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: save }
  - { id: save, type: insert, name: Save, collection: lines, document: { n: "{{ start.n }}", from: child }, next: mine }
  - { id: mine, type: get, name: Mine, collection: lines, documentId: "{{ save.insertedId }}", next: { found: done, missing: lost } }
  - { id: done, type: end, name: Done, body: { id: "{{ save.insertedId }}" } }
  - { id: lost, type: end, name: Lost, status: 500, body: { lost: true } }
`,
  parent: `
name: Parent
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: first }
  - { id: first, type: insert, name: First, collection: lines, document: { n: 0, from: parent }, next: sub }
  - { id: sub, type: call, name: Sub, flow: child, input: { n: 1 }, next: last }
  - { id: last, type: insert, name: Last, collection: lines, document: { n: 2, from: parent }, next: done }
  - { id: done, type: end, name: Done }
`,
  fan: `
name: Fan
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: child, concurrency: 3, next: done }
  - { id: done, type: end, name: Done, body: "{{ all }}" }
`,
  broken: `
name: Broken
nodes:
  - { id: start, type: start, name: Start, ${BODY}, next: save }
  - { id: save, type: insert, name: Save, collection: orders, document: { sku: broken }, next: boom }
  - { id: boom, type: set, name: Boom, values: { v: "{{= $number('x') }}" }, next: done }
  - { id: done, type: end, name: Done }
`,
}

let project: Project
let base: Store
let calls: { method: string; documents: readonly RunDocument[] }[]

/** The store, noting each write call the engine makes (with the documents it carries). */
function noting(store: Store): Store {
  const { history, documents } = store
  const notingHistory: HistoryPort = {
    recordRun: (run, cap, details, written) => {
      calls.push({ method: 'recordRun', documents: written ?? [] })
      return history.recordRun(run, cap, details, written)
    },
    listRuns: (query) => history.listRuns(query),
    getRun: (id, runId) => history.getRun(id, runId),
    countRuns: (id, flows, after) => history.countRuns(id, flows, after),
    onRecorded: (listener) => history.onRecorded(listener),
  }
  const notingDocuments: DocumentsPort = {
    insert: (id, collection, document, given) => {
      calls.push({ method: 'insert', documents: [] })
      return documents.insert(id, collection, document, given)
    },
    insertRunDocuments: (id, written) => {
      calls.push({ method: 'insertRunDocuments', documents: written })
      return documents.insertRunDocuments(id, written)
    },
    get: (id, collection, documentId) => documents.get(id, collection, documentId),
    find: (id, collection, query) => documents.find(id, collection, query),
    update: (id, collection, filter, change) => documents.update(id, collection, filter, change),
    delete: (id, collection, filter) => documents.delete(id, collection, filter),
    listCollections: (id) => documents.listCollections(id),
    ensureIndexes: (indexes) => documents.ensureIndexes(indexes),
  }
  return {
    kind: store.kind,
    history: notingHistory,
    documents: notingDocuments,
    schedules: store.schedules,
    guards: store.guards,
    queue: store.queue,
    waits: store.waits,
    close: () => store.close(),
  }
}

async function run(slug: string, body: unknown, options: { runId?: string } = {}) {
  return runFlow({ project, flow: project.flows.get(slug)!, store: noting(base), trigger: 'cli', method: 'POST', input: { body }, ...options })
}

const projectId = () => project.settings.projectId

beforeAll(async () => {
  project = await projectFromText(FLOWS)
  base = await openSqliteStore(join(await makeTempDir('flowctl-run-docs-'), 'flowctl.db'))
})
afterAll(async () => {
  await base?.close()
  await cleanupTempDirs()
})
beforeEach(() => {
  calls = []
})

describe('one commit per run', () => {
  it("commits an insert with the run's record: one write call, and the document is there once it resolved", async () => {
    const outcome = await run('order', { sku: 'A-1' })
    expect(outcome).toMatchObject({ kind: 'response', status: 201 })
    const id = (outcome as { body: { id: string } }).body.id
    expect(calls).toEqual([{ method: 'recordRun', documents: [{ collection: 'orders', id, document: { sku: 'A-1' }, keepExisting: false }] }])
    expect(await base.documents.get(projectId(), 'orders', id)).toEqual({ _id: id, sku: 'A-1' })
    expect(await base.history.getRun(projectId(), (outcome as { runId: string }).runId)).toMatchObject({ status: 'success' })
  })

  it('lets a run read, update and find its own inserts (they are committed first)', async () => {
    const outcome = await run('readback', { sku: 'RB-1' })
    expect(outcome).toMatchObject({ kind: 'response', status: 200 })
    const body = (outcome as { body: { loaded: Record<string, unknown>; count: number } }).body
    expect(body.loaded).toMatchObject({ sku: 'RB-1', state: 'paid' })
    expect(body.count).toBe(1)
    // The update committed the pending insert; the record carries nothing more.
    expect(calls.map((c) => [c.method, c.documents.length])).toEqual([
      ['insertRunDocuments', 1],
      ['recordRun', 0],
    ])
  })

  it("writes a sub-flow's inserts with its caller's, once each, in insertion order", async () => {
    const outcome = await run('parent', {})
    expect(outcome).toMatchObject({ kind: 'response', status: 200 })
    // The child reads back its own insert: the parent's first insert and the child's commit then;
    // the parent's last insert commits with the record.
    expect(calls.map((c) => [c.method, c.documents.map((d) => (d.document as { n: number }).n)])).toEqual([
      ['insertRunDocuments', [0, 1]],
      ['recordRun', [2]],
    ])
    const lines = await base.documents.find(projectId(), 'lines', { filter: { kind: 'all', items: [] }, limit: 100 })
    const ours = calls.flatMap((c) => c.documents.map((d) => d.id))
    expect(lines.documents.filter((d) => ours.includes((d as { _id: string })._id)).map((d) => (d as { n: number }).n)).toEqual([0, 1, 2])
  })

  it('gives each of concurrent sub-flow runs its own writes to read, and loses none', async () => {
    const items = Array.from({ length: 7 }, (_, n) => ({ n: n + 10 }))
    const outcome = await run('fan', { items })
    expect(outcome).toMatchObject({ kind: 'response', status: 200 })
    const { results, failed } = (outcome as { body: { results: { status: number; body: { id: string } }[]; failed: number } }).body
    expect(failed).toBe(0)
    const ids = results.map((result) => result.body.id)
    expect(new Set(ids).size).toBe(7)
    const written = calls.flatMap((c) => c.documents.map((d) => d.id))
    expect(written.sort()).toEqual([...ids].sort())
    for (const [i, id] of ids.entries()) expect(await base.documents.get(projectId(), 'lines', id)).toEqual({ _id: id, n: items[i]!.n, from: 'child' })
  })

  it("commits a failed run's inserts with its failure record", async () => {
    const outcome = await run('broken', {})
    expect(outcome).toMatchObject({ kind: 'failed', nodeId: 'boom' })
    expect(calls.map((c) => c.method)).toEqual(['recordRun'])
    const [document] = calls[0]!.documents
    expect(await base.documents.get(projectId(), 'orders', document!.id)).toEqual({ _id: document!.id, sku: 'broken' })
    expect(await base.history.getRun(projectId(), (outcome as { runId: string }).runId)).toMatchObject({ status: 'error', failedNodeId: 'boom' })
  })

  it('writes none of the inserts when the record cannot be committed', async () => {
    const first = await run('order', { sku: 'first' })
    const runId = (first as { runId: string }).runId
    calls = []
    // The same run id again: its record is refused (the primary key), so its insert must not land.
    await expect(run('order', { sku: 'again' }, { runId })).rejects.toBeDefined()
    const [document] = calls[0]!.documents
    expect(document).toMatchObject({ document: { sku: 'again' } })
    expect(await base.documents.get(projectId(), 'orders', document!.id)).toBeNull()
  })
})
