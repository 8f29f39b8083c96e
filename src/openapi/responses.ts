// The responses of one operation: what the flow's reachable End nodes answer, plus the answers the
// Run API gives before or around execution (400 validation, 401 auth, 413/415 body, 429 rate
// limit, 500 failed run, 503 store), with the headers each answer carries.
import { reachableFrom } from '../model/flow-graph.js'
import { DEFAULT_END_STATUS } from '../nodes/end.js'
import { getNodeKind } from '../nodes/registry.js'
import type { NodeResponseDoc } from '../nodes/types.js'
import type { Flow, FlowNode, JsonSchema } from '../model/project.js'
import { nullableBodyPaths } from '../project/end-bindings.js'
import { withNullable } from './nullable.js'
import { toOpenApiSchema } from './schema-convert.js'
import type { OpenApiResponse, SchemaOrRef } from './types.js'

export const ERROR_SCHEMA_NAME = 'ErrorResponse'
export const RUN_FAILED_SCHEMA_NAME = 'RunFailed'

/** Body of 400, 401, 413, 415, 429 and 503 answers of the Run API. */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean', enum: [false] },
    errors: { type: 'array', items: { type: 'string' } },
  },
  required: ['ok', 'errors'],
}

/** Body of a 500: a node failed or the run timed out. */
export const RUN_FAILED_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean', enum: [false] },
    errors: { type: 'array', items: { type: 'string' } },
    nodeId: { type: 'string', nullable: true },
    runId: { type: 'string' },
  },
  required: ['ok', 'errors'],
}

export const ASYNC_ACCEPTED_SCHEMA_NAME = 'AsyncAccepted'

/** Body of the 202 of an async Start (SPEC §12): the run is queued. */
export const ASYNC_ACCEPTED_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean', enum: [true] },
    runId: { type: 'string', description: 'Id of the queued run (its history record gets the same id)' },
    status: { type: 'string', enum: ['queued'] },
  },
  required: ['ok', 'runId', 'status'],
}

export const ASYNC_RESULT_SCHEMA_NAME = 'AsyncResult'

/** Body of `GET /api/result/<projectId>/<runId>` (SPEC §12): the state of an async run. */
export const ASYNC_RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    runId: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'success', 'error'] },
    response: {
      type: 'object',
      nullable: true,
      description: 'What a synchronous call would have answered; null until the run finished',
      properties: {
        status: { type: 'integer' },
        body: { description: "The answer's body (null when it has none)" },
      },
      required: ['status', 'body'],
    },
  },
  required: ['runId', 'status', 'response'],
}

const JSON_TYPE = 'application/json'
const runIdHeader = () => ({ 'X-Run-Id': { description: 'Id of the run in run history', schema: { type: 'string' } } })

interface ReachableEnds {
  /** Reachable nodes of terminating kinds (End), in file order. */
  ends: FlowNode[]
  /** Whether some reachable port has no edge, so a run can end without an End (204). */
  endsWithoutEnd: boolean
}

/**
 * Follows `next` edges from the Start node over every port each node kind has, and `onError`
 * branches (SPEC §13, §20): an End reached after a failure answers like any other.
 */
function findReachableEnds(flow: Flow, startNode: FlowNode): ReachableEnds {
  const { reached, open } = reachableFrom(startNode.id, (id) => {
    const node = flow.nodesById.get(id)!
    const ports = getNodeKind(node.type)?.ports(node.parsed) ?? Object.keys(node.next)
    // A target that is not a node (never so in a loaded flow) ends the run like a missing edge.
    const targets = ports.map((port) => (flow.nodesById.has(node.next[port] ?? '') ? node.next[port] : undefined))
    const onError = node.settings.onError
    return typeof onError === 'string' && flow.nodesById.has(onError) ? [...targets, onError] : targets
  })
  const ends = flow.nodes.filter((node) => getNodeKind(node.type)?.terminates && reached.has(node.id))
  return { ends, endsWithoutEnd: open }
}

/**
 * What one terminating node answers, in OpenAPI's dialect of JSON Schema; body properties bound to
 * values that may be missing at run time are nullable.
 */
function endAnswer(flow: Flow, end: FlowNode): { status: number; mediaType: string; schema: JsonSchema; headers: string[] } {
  const documented: NodeResponseDoc = getNodeKind(end.type)?.openapi?.response?.(end.parsed) ?? {
    status: DEFAULT_END_STATUS,
    mediaType: JSON_TYPE,
    schema: null,
    headers: [],
  }
  return { ...documented, schema: documented.schema ? toOpenApiSchema(withNullable(documented.schema, nullableBodyPaths(flow, end))) : {} }
}

/** One schema, or a oneOf of distinct ones; an open schema (`{}`) swallows the others. */
function unionOf(schemas: SchemaOrRef[]): SchemaOrRef {
  const distinct = new Map(schemas.map((s) => [JSON.stringify(s), s]))
  if (distinct.has('{}')) return {}
  const members = [...distinct.values()]
  return members.length === 1 ? members[0]! : { oneOf: members }
}

function schemaOf(response: OpenApiResponse): SchemaOrRef[] {
  const schema = response.content?.[JSON_TYPE]?.schema
  if (!schema) return []
  return Array.isArray(schema.oneOf) ? (schema.oneOf as SchemaOrRef[]) : [schema]
}

export type ResponseHeaders = NonNullable<OpenApiResponse['headers']>

/** Adds an error answer; when an End already answers that status, both bodies are possible. */
export function addErrorResponse(
  responses: Record<string, OpenApiResponse>,
  status: number,
  description: string,
  schemaName: string,
  headers: ResponseHeaders = {},
): void {
  const ref = { $ref: `#/components/schemas/${schemaName}` }
  const existing = responses[status]
  if (!existing) {
    responses[status] = { description, ...(Object.keys(headers).length ? { headers } : {}), content: { [JSON_TYPE]: { schema: ref } } }
    return
  }
  if (Object.keys(headers).length) existing.headers = { ...existing.headers, ...headers }
  existing.content = { ...existing.content, [JSON_TYPE]: { schema: unionOf([...schemaOf(existing), ref]) } }
}

export interface ResponseOptions {
  /** The Start has auth: 401 with WWW-Authenticate. */
  hasAuth: boolean
  /** The route reads a body: 413 and 415. */
  readsBody: boolean
  /** `runsPerMinutePerIp` is on: 429 with Retry-After. */
  rateLimited: boolean
  /** The flow has CORS settings: every answer may carry these. */
  cors: { credentials: boolean } | null
  /** The Start's idempotency header (SPEC §12): 409, 422 and Idempotent-Replayed are documented. */
  idempotencyHeader?: string | null
  /** The Start has `concurrency` with `onLimit: reject`: 429 "flow busy". */
  concurrencyRejects?: boolean
  /** `respond: async`: the call answers 202 (queued) instead of the End's statuses, and never 500. */
  async?: boolean
}

export const header = (description: string): { description: string; schema: JsonSchema } => ({ description, schema: { type: 'string' } })

/** CORS answer headers (documented on every response of a flow with CORS settings). */
export function corsHeaders(cors: { credentials: boolean }): ResponseHeaders {
  return {
    'Access-Control-Allow-Origin': header('The calling origin (or *) when it is allowed'),
    ...(cors.credentials ? { 'Access-Control-Allow-Credentials': header('true when the origin is allowed') } : {}),
    'Access-Control-Expose-Headers': header('X-Run-Id, on run answers to an allowed origin'),
    Vary: header('Origin'),
  }
}

export function buildResponses(flow: Flow, startNode: FlowNode, options: ResponseOptions): Record<string, OpenApiResponse> {
  const { ends, endsWithoutEnd } = options.async ? { ends: [], endsWithoutEnd: false } : findReachableEnds(flow, startNode)
  const byStatus = new Map<number, { content: Map<string, JsonSchema[]>; headers: Set<string> }>()
  for (const end of ends) {
    const answer = endAnswer(flow, end)
    const status = answer.status
    let entry = byStatus.get(status)
    if (!entry) byStatus.set(status, (entry = { content: new Map(), headers: new Set() }))
    entry.content.set(answer.mediaType, [...(entry.content.get(answer.mediaType) ?? []), answer.schema])
    for (const name of answer.headers) entry.headers.add(name)
  }

  const cors = options.cors ? corsHeaders(options.cors) : {}
  const responses: Record<string, OpenApiResponse> = {}
  for (const [status, { content, headers }] of byStatus) {
    const documented: ResponseHeaders = { ...runIdHeader() }
    for (const name of [...headers].sort()) documented[name] = header('Set by the flow')
    if (options.idempotencyHeader)
      documented['Idempotent-Replayed'] = header('true when this is the stored answer of an earlier request with the same idempotency key')
    Object.assign(documented, cors)
    const media: Record<string, { schema: SchemaOrRef }> = {}
    for (const type of [...content.keys()].sort()) media[type] = { schema: unionOf(content.get(type)!) }
    // A 204 carries no body, whatever the End's schema says.
    responses[status] = status === 204 ? { description: 'Success', headers: documented } : { description: 'Success', headers: documented, content: media }
  }
  if (endsWithoutEnd && !responses[204]) responses[204] = { description: 'No content', headers: { ...runIdHeader(), ...cors } }
  if (options.async) {
    responses[202] = {
      description: 'Queued: the run executes in the background; poll the Location for its result',
      headers: { Location: header('/api/result/<projectId>/<runId>: the state and, once finished, the response of the run'), ...runIdHeader(), ...cors },
      content: { [JSON_TYPE]: { schema: { $ref: `#/components/schemas/${ASYNC_ACCEPTED_SCHEMA_NAME}` } } },
    }
  }
  addErrorResponse(responses, 400, 'Validation error', ERROR_SCHEMA_NAME, cors)
  if (options.hasAuth) addErrorResponse(responses, 401, 'Unauthorized', ERROR_SCHEMA_NAME, { 'WWW-Authenticate': header('The credential expected'), ...cors })
  if (options.readsBody) {
    addErrorResponse(responses, 413, 'Body too large (limits.bodyLimitBytes)', ERROR_SCHEMA_NAME, cors)
    addErrorResponse(responses, 415, 'Unsupported content type', ERROR_SCHEMA_NAME, cors)
  }
  if (options.idempotencyHeader) {
    const key = options.idempotencyHeader
    addErrorResponse(responses, 409, `A request with the same ${key} is still running`, ERROR_SCHEMA_NAME, {
      'Retry-After': { description: 'Seconds to wait before asking again', schema: { type: 'integer' } },
      ...cors,
    })
    addErrorResponse(responses, 422, `${key} already used with a different request`, ERROR_SCHEMA_NAME, cors)
  }
  if (options.rateLimited || options.concurrencyRejects) {
    const description =
      options.rateLimited && options.concurrencyRejects
        ? 'Rate limit exceeded, or the flow is busy (its concurrency limit is reached)'
        : options.rateLimited
          ? 'Rate limit exceeded'
          : 'The flow is busy (its concurrency limit is reached)'
    const retryAfter = options.concurrencyRejects ? 'Seconds to wait before trying again' : 'Seconds until the next minute'
    addErrorResponse(responses, 429, description, ERROR_SCHEMA_NAME, { 'Retry-After': { description: retryAfter, schema: { type: 'integer' } }, ...cors })
  }
  // An async run fails in the background: its 500 is in the result, not in this answer.
  if (!options.async) addErrorResponse(responses, 500, 'Run failed', RUN_FAILED_SCHEMA_NAME, { ...runIdHeader(), ...cors })
  addErrorResponse(responses, 503, 'Store unavailable', ERROR_SCHEMA_NAME, cors)

  return sortedResponses(responses)
}

/** Response codes ascending (they are all three digits, so text order is numeric order). */
export function sortedResponses(responses: Record<string, OpenApiResponse>): Record<string, OpenApiResponse> {
  const sorted: Record<string, OpenApiResponse> = {}
  for (const status of Object.keys(responses).sort()) sorted[status] = responses[status]!
  return sorted
}
