// One test case through the one engine (runFlow): a fresh in-memory SQLite store (a copy of one
// migrated once; seeded with the case's documents), http nodes answered
// from the case's mocks (never the network), the case's secrets over the project's, and its `now`.
import { answerOutcome } from '../flow/answer.js'
import { runFlow } from '../flow/engine.js'
import type { FetchAnswer, NodeFetch, TraceStep } from '../model/run.js'
import { maskValue } from '../flow/mask.js'
import type { Project } from '../model/project.js'
import { openFreshMemoryStore } from '../store/sqlite/index.js'
import type { DocumentIndexes, DocumentsPort, RunDocument, Store } from '../model/store.js'
import { diffLines, partialMatch, type Mismatch } from './match.js'
import type { HttpMock, TestCase, TestFile } from './test-file.js'
import { compareText } from '../internal/compare.js'

export interface CaseFailure {
  /** What did not match: an expected field, or `mocks` for an http node without one. */
  field: 'status' | 'body' | 'ports' | 'documents' | 'failedNodeId' | 'mocks'
  message: string
  mismatches: Mismatch[]
  /** Unified diff lines (`- ` expected, `+ ` received), for structured values. */
  diff: string[]
}

/** A node the case passed through, and the port it left by (null: it ended the run or failed). */
export interface ReachedStep {
  flow: string
  nodeId: string
  port: string | null
}

export interface CaseResult {
  file: string
  flow: string
  name: string
  line: number
  ok: boolean
  durationMs: number
  runId: string | null
  failures: CaseFailure[]
  /** Why the run failed or its input was rejected, shown with the failures. */
  notes: string[]
  reached: ReachedStep[]
}

/** What the run gave, in the terms of `expect`. */
interface Observed {
  status: number
  body: unknown
  ports: { nodeId: string; port: string }[]
  failedNodeId: string | null
  runId: string | null
}

export async function runCase(project: Project, testFile: TestFile, testCase: TestCase): Promise<CaseResult> {
  const began = performance.now()
  const caseProject = withSecrets(project, testCase.secrets)
  const store = await openFreshMemoryStore()
  const inserted = new Map<string, string[]>()
  const unmocked = new Set<string>()
  const notes: string[] = []
  let observed: Observed
  let reached: ReachedStep[] = []
  let documents: Record<string, unknown[]> = {}
  try {
    await seedDocuments(store, project.settings.projectId, testCase.documents, inserted)
    const outcome = await runFlow({
      project: caseProject,
      flow: testFile.flow,
      store: recordingInserts(store, inserted),
      trigger: 'cli',
      method: testFile.flow.start?.method.toUpperCase() ?? 'CLI',
      input: testCase.input,
      trace: true,
      ...(testCase.now ? { now: () => testCase.now as Date } : {}),
      fetch: mockFetch(testCase.mocks, unmocked),
      // Retry delays and wait nodes return at once, as fake timers do: a case never sleeps.
      sleep: async () => {},
    })
    // What the Run API would answer (answerOutcome), compared with the case's expectations.
    const answer = answerOutcome(outcome)
    if (outcome.kind === 'invalid') {
      observed = { status: answer.status, body: answer.body, ports: [], failedNodeId: null, runId: null }
      notes.push(`the input was rejected: ${outcome.errors.join('; ')}`)
    } else {
      reached = outcome.trace ? reachedSteps(testFile.flow.slug, outcome.trace.steps) : []
      const failedNodeId = outcome.kind === 'failed' ? outcome.nodeId : null
      observed = { status: answer.status, body: answer.body, ports: outcome.record.ports, failedNodeId, runId: outcome.runId }
      if (outcome.kind === 'failed') notes.push(`the run failed at node "${outcome.nodeId}": ${outcome.error}`)
    }
    documents = await storedDocuments(store, project.settings.projectId, inserted, Object.keys(testCase.expect.documents ?? {}))
  } finally {
    await store.close()
  }
  // What is printed goes through the same masking as traces: a project secret never reaches a report.
  const failures = maskValue(compare(testCase, observed, documents, unmocked), caseProject.secrets) as CaseFailure[]
  return {
    file: testFile.file,
    flow: testFile.flow.slug,
    name: testCase.name,
    line: testCase.line,
    ok: failures.length === 0,
    durationMs: Math.round((performance.now() - began) * 100) / 100,
    runId: observed.runId,
    failures,
    notes: failures.length ? (maskValue(notes, caseProject.secrets) as string[]) : [],
    reached,
  }
}

function compare(testCase: TestCase, observed: Observed, documents: Record<string, unknown[]>, unmocked: Set<string>): CaseFailure[] {
  const failures: CaseFailure[] = []
  const { expect } = testCase
  for (const nodeId of unmocked) {
    failures.push({
      field: 'mocks',
      message: `http node "${nodeId}" has no mock in this case (tests never reach the network); add mocks: { ${nodeId}: { status: 200, body: ... } }`,
      mismatches: [],
      diff: [],
    })
  }
  const check = (field: CaseFailure['field'], expected: unknown, actual: unknown) => {
    const mismatches = partialMatch(expected, actual, field)
    if (mismatches.length === 0) return
    const structured = expected !== null && typeof expected === 'object'
    const message = structured ? 'does not match' : (mismatches[0]?.message ?? 'does not match')
    failures.push({ field, message, mismatches, diff: structured ? diffLines(expected, actual) : [] })
  }
  if (expect.status !== undefined) check('status', expect.status, observed.status)
  if (expect.body !== undefined) check('body', expect.body, observed.body)
  if (expect.ports !== undefined) check('ports', expect.ports, observed.ports)
  if (expect.documents !== undefined) check('documents', expect.documents, documents)
  if (expect.failedNodeId !== observed.failedNodeId) {
    const message =
      expect.failedNodeId === null
        ? `the run failed at node "${observed.failedNodeId}", but no node should fail (set failedNodeId to expect it)`
        : observed.failedNodeId === null
          ? `expected node "${expect.failedNodeId}" to fail, but the run succeeded with status ${observed.status}`
          : `expected node "${expect.failedNodeId}" to fail, but node "${observed.failedNodeId}" failed`
    failures.push({ field: 'failedNodeId', message, mismatches: [], diff: [] })
  }
  return failures
}

function withSecrets(project: Project, secrets: Record<string, string>): Project {
  const names = Object.keys(secrets)
  if (names.length === 0) return project
  return { ...project, secrets: new Map([...project.secrets, ...Object.entries(secrets)]) }
}

/** Notes the ids of the documents each collection got, so the case can read them back. */
type NoteInsert = (collection: string, id: string) => void

/**
 * The store with its documents port noting inserts. A run's inserts reach the store with its record
 * (one commit per run: noted from `history.onRecorded`), or ahead of it through `insertRunDocuments`
 * when a node of the run reads documents; a write outside a run (none today) comes through `insert`.
 */
function recordingInserts(store: Store, inserted: Map<string, string[]>): Store {
  const note: NoteInsert = (collection, id) => {
    const ids = inserted.get(collection) ?? []
    ids.push(id)
    inserted.set(collection, ids)
  }
  store.history.onRecorded((_run, documents) => {
    for (const document of documents) note(document.collection, document.id)
  })
  const { kind, history, schedules, guards, queue, waits } = store
  return { kind, history, documents: new NotingDocuments(store.documents, note), schedules, guards, queue, waits, close: () => store.close() }
}

/** The documents port, noting what is inserted once it is committed. */
class NotingDocuments implements DocumentsPort {
  constructor(
    private readonly documents: DocumentsPort,
    private readonly note: NoteInsert,
  ) {}

  async insert(projectId: string, collection: string, document: unknown, id?: string): Promise<string> {
    const stored = await this.documents.insert(projectId, collection, document, id)
    this.note(collection, stored)
    return stored
  }

  async insertRunDocuments(projectId: string, documents: readonly RunDocument[]): Promise<void> {
    await this.documents.insertRunDocuments(projectId, documents)
    for (const document of documents) this.note(document.collection, document.id)
  }

  get(...args: Parameters<DocumentsPort['get']>): ReturnType<DocumentsPort['get']> {
    return this.documents.get(...args)
  }

  find(...args: Parameters<DocumentsPort['find']>): ReturnType<DocumentsPort['find']> {
    return this.documents.find(...args)
  }

  update(...args: Parameters<DocumentsPort['update']>): ReturnType<DocumentsPort['update']> {
    return this.documents.update(...args)
  }

  delete(...args: Parameters<DocumentsPort['delete']>): ReturnType<DocumentsPort['delete']> {
    return this.documents.delete(...args)
  }

  listCollections(projectId: string): ReturnType<DocumentsPort['listCollections']> {
    return this.documents.listCollections(projectId)
  }

  ensureIndexes(indexes: DocumentIndexes): Promise<void> {
    return this.documents.ensureIndexes(indexes)
  }
}

/** Stores the case's `documents` before the run, with their `_id` as id; they count as inserted (for `expect.documents`). */
async function seedDocuments(store: Store, projectId: string, seeds: TestCase['documents'], inserted: Map<string, string[]>): Promise<void> {
  for (const [collection, documents] of Object.entries(seeds)) {
    for (const { _id, ...fields } of documents) {
      const id = await store.documents.insert(projectId, collection, fields, typeof _id === 'string' ? _id : undefined)
      inserted.set(collection, [...(inserted.get(collection) ?? []), id])
    }
  }
}

/** The seeded documents and those the run stored, in insertion order, as they are after the run. */
async function storedDocuments(store: Store, projectId: string, inserted: Map<string, string[]>, collections: string[]): Promise<Record<string, unknown[]>> {
  const result: Record<string, unknown[]> = {}
  for (const collection of collections) {
    const found = await Promise.all((inserted.get(collection) ?? []).map((id) => store.documents.get(projectId, collection, id)))
    result[collection] = found.filter((document) => document !== null)
  }
  return result
}

/** Answers http nodes from the mocks; an http node without one is noted and fails as a network error would. */
function mockFetch(mocks: Map<string, HttpMock>, unmocked: Set<string>): NodeFetch {
  return async (_url, _init, node) => {
    const mock = mocks.get(node.id)
    if (!mock) {
      unmocked.add(node.id)
      throw new Error(`http node "${node.id}" has no mock in this test case`)
    }
    if ('error' in mock) {
      if (mock.error === 'timeout') throw new DOMException('The operation was aborted due to timeout', 'TimeoutError')
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })
    }
    return mockResponse(mock)
  }
}

const NULL_BODY_STATUSES = new Set([204, 205, 304])

/** The answer a mock gives an http node: what `new Response(body, { status, headers })` would, as read by the node. */
export function mockResponse(mock: Extract<HttpMock, { status: number }>): FetchAnswer {
  const headers = mockHeaders(mock.headers ?? {})
  let text = ''
  if (mock.body !== undefined && !NULL_BODY_STATUSES.has(mock.status)) {
    text = typeof mock.body === 'string' ? mock.body : JSON.stringify(mock.body)
    if (!headers.has('content-type')) headers.set('content-type', typeof mock.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json')
  }
  const entries = () => [...headers].sort(([a], [b]) => compareText(a, b))
  return {
    status: mock.status,
    statusText: '',
    headers: { get: (name) => headers.get(name.toLowerCase()) ?? null, [Symbol.iterator]: () => entries()[Symbol.iterator]() },
    text: async () => text,
  }
}

// What `new Headers(record)` accepts and makes of it, without loading Node's fetch (see FetchAnswer).
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const HEADER_VALUE_FORBIDDEN = /[\0\r\n]/

function mockHeaders(record: Record<string, string>): Map<string, string> {
  const headers = new Map<string, string>()
  for (const [name, raw] of Object.entries(record)) {
    const value = String(raw).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '')
    if (!HEADER_NAME.test(name)) throw new TypeError(`Headers.append: "${name}" is an invalid header name.`)
    if (HEADER_VALUE_FORBIDDEN.test(value)) throw new TypeError(`Headers.append: "${value}" is an invalid header value.`)
    const key = name.toLowerCase()
    const earlier = headers.get(key)
    headers.set(key, earlier === undefined ? value : `${earlier}, ${value}`)
  }
  return headers
}

function reachedSteps(flow: string, steps: TraceStep[]): ReachedStep[] {
  return steps.flatMap((step) => [{ flow, nodeId: step.nodeId, port: step.port }, ...(step.calls ?? []).flatMap((call) => reachedSteps(call.flow, call.steps))])
}
