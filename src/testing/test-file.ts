// One test file → its cases, with every problem at file:line:column (like flow files). A file is
// checked against the project it tests: the flow exists, mocks name http nodes the run can reach,
// expected ports and failing nodes exist.
import { shapeValidator } from '../project/ajv.js'
import type { Flow, Problem, Project } from '../model/project.js'
import { describeSchemaErrors } from '../project/schema-messages.js'
import { parseYamlSource, positionAt, ProblemCollector } from '../project/yaml-source.js'
import { getNodeKind } from '../nodes/registry.js'
import type { RunInput } from '../model/run.js'
import { TEST_FILE_SCHEMA } from '../model/test-file-shape.js'

export type HttpMock = { status: number; headers: Record<string, string>; body: unknown } | { error: 'timeout' | 'network' }

interface TestExpectation {
  status?: number
  body?: unknown
  ports?: { nodeId: string; port: string }[]
  documents?: Record<string, unknown[]>
  /** Null when the run must not fail (also when not written). */
  failedNodeId: string | null
}

export interface TestCase {
  name: string
  /** 1-based line of the case in its file (JUnit and messages point at it). */
  line: number
  input: RunInput
  secrets: Record<string, string>
  mocks: Map<string, HttpMock>
  now: Date | null
  /** Collection → documents stored before the run; `_id` (when given) is the document's id. */
  documents: Record<string, Record<string, unknown>[]>
  expect: TestExpectation
}

export interface TestFile {
  /** Path relative to the project folder, with forward slashes. */
  file: string
  flow: Flow
  cases: TestCase[]
}

export interface TestFileResult {
  file: string
  /** The slug the file names (even when the file has errors), for `--flow`. */
  flowSlug: string | null
  problems: Problem[]
  testFile: TestFile | null
}

interface RawCase {
  name: string
  input?: { body?: unknown; path?: Record<string, unknown>; query?: Record<string, unknown>; headers?: Record<string, unknown> }
  secrets?: Record<string, string>
  mocks?: Record<string, { status?: number; headers?: Record<string, string>; body?: unknown; error?: 'timeout' | 'network' }>
  now?: string
  documents?: Record<string, Record<string, unknown>[]>
  expect: { status?: number; body?: unknown; ports?: { nodeId: string; port: string }[]; documents?: Record<string, unknown[]>; failedNodeId?: string | null }
}

/** ISO 8601 date and time with a timezone (Z or ±hh:mm). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/

export function checkTestFile(file: string, text: string, project: Project): TestFileResult {
  const source = parseYamlSource(text)
  const collector = new ProblemCollector(file, source)
  const done = (flowSlug: string | null, testFile: TestFile | null): TestFileResult => ({
    file,
    flowSlug,
    problems: collector.problems,
    testFile: collector.hasErrors ? null : testFile,
  })
  for (const { pos, message } of source.syntaxErrors) collector.at(pos, message)
  if (source.syntaxErrors.length > 0) return done(null, null)

  const data = source.data ?? {}
  const validate = shapeValidator(TEST_FILE_SCHEMA)
  if (!validate(data)) {
    for (const issue of describeSchemaErrors(validate.errors ?? [], data, { rootName: 'a test file' })) {
      collector.error(issue.path, issue.message, { key: issue.key })
    }
    return done(typeof (data as { flow?: unknown }).flow === 'string' ? (data as { flow: string }).flow : null, null)
  }
  const raw = data as { flow: string; cases: RawCase[] }
  const flow = project.flows.get(raw.flow)
  if (!flow) {
    const known = [...project.flows.keys()].sort().join(', ') || 'none'
    collector.error(['flow'], `there is no flow with the slug "${raw.flow}" to test (flows: ${known})`)
    return done(raw.flow, null)
  }
  if (!flow.start) {
    collector.error(['flow'], `flow "${raw.flow}" has no start node, so it cannot be run by a test`)
    return done(raw.flow, null)
  }

  const httpNodes = reachableHttpNodes(flow, project)
  const seen = new Set<string>()
  const cases = raw.cases.map((rawCase, index) => {
    const at = ['cases', index]
    if (seen.has(rawCase.name)) collector.error([...at, 'name'], `two cases of this file are named "${rawCase.name}"; give each its own name`)
    seen.add(rawCase.name)
    for (const nodeId of Object.keys(rawCase.mocks ?? {})) {
      if (!httpNodes.has(nodeId)) {
        const known = [...httpNodes].join(', ') || 'none'
        collector.error([...at, 'mocks', nodeId], `there is no http node "${nodeId}" in flow "${flow.slug}" or the flows it calls (http nodes: ${known})`, {
          key: true,
        })
      }
    }
    if (rawCase.now !== undefined && (!ISO_TIME.test(rawCase.now) || Number.isNaN(Date.parse(rawCase.now)))) {
      collector.error([...at, 'now'], `now must be an ISO 8601 time with a timezone, like 2026-01-01T09:00:00Z (got "${rawCase.now}")`)
    }
    checkSeedIds(rawCase, at, collector)
    checkExpectedNodes(flow, rawCase, at, collector)
    return toCase(rawCase, positionAt(source, at).line)
  })
  return done(raw.flow, { file, flow, cases })
}

const COLLECTION_NAME = /^[A-Za-z0-9_-]+$/

/** Seeded ids are primary keys of the one documents table: unique across the case's collections. */
function checkSeedIds(rawCase: RawCase, at: (string | number)[], collector: ProblemCollector): void {
  const seen = new Map<string, string>()
  for (const [collection, documents] of Object.entries(rawCase.documents ?? {})) {
    if (!COLLECTION_NAME.test(collection)) {
      collector.error([...at, 'documents', collection], `"${collection}" is not a collection name (letters, digits, _ and -)`, { key: true })
    }
    documents.forEach((document, index) => {
      if (typeof document._id !== 'string') return
      const other = seen.get(document._id)
      if (other !== undefined) {
        collector.error(
          [...at, 'documents', collection, index, '_id'],
          `two seeded documents have the _id "${document._id}" (the other in ${other}); give each its own`,
        )
      }
      seen.set(document._id, collection)
    })
  }
}

function checkExpectedNodes(flow: Flow, rawCase: RawCase, at: (string | number)[], collector: ProblemCollector): void {
  rawCase.expect.ports?.forEach(({ nodeId, port }, index) => {
    const node = flow.nodesById.get(nodeId)
    if (!node) {
      collector.error([...at, 'expect', 'ports', index, 'nodeId'], `flow "${flow.slug}" has no node "${nodeId}"`)
      return
    }
    const ports = nodePorts(node)
    if (!ports.includes(port)) {
      collector.error([...at, 'expect', 'ports', index, 'port'], `node "${nodeId}" has no port "${port}" (ports: ${ports.join(', ') || 'none'})`)
    }
  })
  const failed = rawCase.expect.failedNodeId
  if (typeof failed === 'string' && !flow.nodesById.has(failed)) {
    collector.error([...at, 'expect', 'failedNodeId'], `flow "${flow.slug}" has no node "${failed}"`)
  }
}

/** The ports a node can leave by: its kind's, plus `error` when it has an onError branch. */
export function nodePorts(node: Flow['nodes'][number]): string[] {
  const kind = getNodeKind(node.type)
  const ports = kind ? kind.ports(node.parsed) : []
  return typeof node.settings.onError === 'string' && !ports.includes('error') ? [...ports, 'error'] : ports
}

/** The flows a run of `flow` may enter: itself and every flow its call/each nodes name, transitively. */
export function flowsReachedFrom(flow: Flow, project: Project): Flow[] {
  const found = new Map<string, Flow>([[flow.slug, flow]])
  const queue = [flow]
  for (let current = queue.shift(); current; current = queue.shift()) {
    for (const node of current.nodes) {
      const slug = getNodeKind(node.type)?.calledFlow?.(node.parsed)
      if (typeof slug !== 'string') continue
      const called = project.flows.get(slug)
      if (called && !found.has(called.slug)) {
        found.set(called.slug, called)
        queue.push(called)
      }
    }
  }
  return [...found.values()]
}

function reachableHttpNodes(flow: Flow, project: Project): Set<string> {
  const ids = new Set<string>()
  for (const reached of flowsReachedFrom(flow, project)) for (const node of reached.nodes) if (getNodeKind(node.type)?.sendsRequests) ids.add(node.id)
  return ids
}

const textOf = (value: unknown) => String(value)

function toCase(raw: RawCase, line: number): TestCase {
  const input: RunInput = {}
  if (raw.input?.body !== undefined) input.body = raw.input.body
  if (raw.input?.path) input.path = Object.fromEntries(Object.entries(raw.input.path).map(([k, v]) => [k, textOf(v)]))
  if (raw.input?.query) {
    input.query = Object.fromEntries(Object.entries(raw.input.query).map(([k, v]) => [k, Array.isArray(v) ? v.map(textOf) : textOf(v)]))
  }
  if (raw.input?.headers) input.headers = Object.fromEntries(Object.entries(raw.input.headers).map(([k, v]) => [k.toLowerCase(), textOf(v)]))
  const mocks = new Map<string, HttpMock>()
  for (const [nodeId, mock] of Object.entries(raw.mocks ?? {})) {
    mocks.set(nodeId, mock.error ? { error: mock.error } : { status: mock.status ?? 200, headers: mock.headers ?? {}, body: mock.body })
  }
  const { failedNodeId, ...expect } = raw.expect
  return {
    name: raw.name,
    line,
    input,
    secrets: raw.secrets ?? {},
    mocks,
    now: raw.now === undefined ? null : new Date(raw.now),
    documents: raw.documents ?? {},
    expect: { ...expect, failedNodeId: failedNodeId ?? null },
  }
}
