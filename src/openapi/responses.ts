// The responses of one operation: what the flow's reachable End nodes answer, plus the answers the
// Run API gives before or around execution (400 validation, 401 auth, 500 failed run).
import { getNodeKind } from '../nodes/registry.js'
import type { Flow, FlowNode, JsonSchema } from '../project/model.js'
import { toOpenApiSchema } from './schema-convert.js'
import type { OpenApiResponse, SchemaOrRef } from './types.js'

export const ERROR_SCHEMA_NAME = 'ErrorResponse'
export const RUN_FAILED_SCHEMA_NAME = 'RunFailed'

/** Body of 400, 401 (and 404, 413, 429) answers of the Run API. */
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

const JSON_TYPE = 'application/json'
const runIdHeader = () => ({ 'X-Run-Id': { description: 'Id of the run in run history', schema: { type: 'string' } } })

export interface ReachableEnds {
  /** Reachable End nodes, in file order. */
  ends: FlowNode[]
  /** Whether some reachable port has no edge, so a run can end without an End (204). */
  endsWithoutEnd: boolean
}

/** Walks `next` edges from the Start node over every port each node kind has. */
export function findReachableEnds(flow: Flow, startNode: FlowNode): ReachableEnds {
  const seen = new Set<string>([startNode.id])
  const queue = [startNode]
  let endsWithoutEnd = false
  while (queue.length > 0) {
    const node = queue.shift()!
    if (node.type === 'end') continue
    const ports = getNodeKind(node.type)?.ports(node.settings) ?? Object.keys(node.next)
    for (const port of ports) {
      const target = node.next[port] === undefined ? undefined : flow.nodesById.get(node.next[port]!)
      if (!target) {
        endsWithoutEnd = true
        continue
      }
      if (seen.has(target.id)) continue
      seen.add(target.id)
      queue.push(target)
    }
  }
  const ends = flow.nodes.filter((node) => node.type === 'end' && seen.has(node.id))
  return { ends, endsWithoutEnd }
}

function endStatus(node: FlowNode): number {
  const status = node.settings.status
  return typeof status === 'number' && Number.isInteger(status) ? status : 200
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

/** Adds an error answer; when an End already answers that status, both bodies are possible. */
function addErrorResponse(responses: Record<string, OpenApiResponse>, status: number, description: string, schemaName: string): void {
  const ref = { $ref: `#/components/schemas/${schemaName}` }
  const existing = responses[status]
  if (!existing) {
    responses[status] = { description, content: { [JSON_TYPE]: { schema: ref } } }
    return
  }
  existing.content = { [JSON_TYPE]: { schema: unionOf([...schemaOf(existing), ref]) } }
}

export function buildResponses(flow: Flow, startNode: FlowNode, hasAuth: boolean): Record<string, OpenApiResponse> {
  const { ends, endsWithoutEnd } = findReachableEnds(flow, startNode)
  const schemasByStatus = new Map<number, JsonSchema[]>()
  for (const end of ends) {
    const raw = end.settings.schema
    const schema = raw && typeof raw === 'object' && !Array.isArray(raw) ? toOpenApiSchema(raw as JsonSchema) : {}
    schemasByStatus.set(endStatus(end), [...(schemasByStatus.get(endStatus(end)) ?? []), schema])
  }

  const responses: Record<string, OpenApiResponse> = {}
  for (const [status, schemas] of schemasByStatus) {
    // A 204 carries no body, whatever the End's schema says.
    responses[status] =
      status === 204
        ? { description: 'Success', headers: runIdHeader() }
        : { description: 'Success', headers: runIdHeader(), content: { [JSON_TYPE]: { schema: unionOf(schemas) } } }
  }
  if (endsWithoutEnd && !responses[204]) responses[204] = { description: 'No content' }
  addErrorResponse(responses, 400, 'Validation error', ERROR_SCHEMA_NAME)
  if (hasAuth) addErrorResponse(responses, 401, 'Unauthorized', ERROR_SCHEMA_NAME)
  addErrorResponse(responses, 500, 'Run failed', RUN_FAILED_SCHEMA_NAME)

  const sorted: Record<string, OpenApiResponse> = {}
  for (const status of Object.keys(responses).sort()) sorted[status] = responses[status]!
  return sorted
}
