// The project's OpenAPI 3.0.3 document: a pure function of the loaded project, with a stable key
// order everywhere (paths sorted, fixed key order per object) so exported documents diff cleanly.
import { getNodeKind } from '../nodes/registry.js'
import { startCors, type Flow, type JsonSchema, type Project, type StartInfo } from '../model/project.js'
import { operationIdsOf, RESULT_OPERATION_ID, summaryOf } from '../project/operation-names.js'
import {
  ASYNC_ACCEPTED_SCHEMA,
  ASYNC_ACCEPTED_SCHEMA_NAME,
  ASYNC_RESULT_SCHEMA,
  ASYNC_RESULT_SCHEMA_NAME,
  buildResponses,
  ERROR_SCHEMA,
  ERROR_SCHEMA_NAME,
  RUN_FAILED_SCHEMA,
  RUN_FAILED_SCHEMA_NAME,
} from './responses.js'
import { resultPath, resultPathItem } from './result.js'
import { toOpenApiSchema } from './schema-convert.js'
import { SecuritySchemes } from './security.js'
import type { NodeRequestDoc } from '../nodes/types.js'
import type { OpenApiDocument, OpenApiOperation, OpenApiParameter, OpenApiPathItem } from './types.js'
import { isRecord } from '../internal/is-record.js'
import { compareText } from '../internal/compare.js'

export type { OpenApiDocument } from './types.js'

export interface GenerateOptions {
  /** `servers[0].url`: the origin the request came to, or `--server-url`. */
  serverUrl: string
}

interface Callable {
  path: string
  flow: Flow
  start: StartInfo
}

/** The run path of a flow, with one `{param}` segment per path input. */
export function runPath(projectId: string, flow: Flow, start: StartInfo): string {
  return [`/api/run/${projectId}/${flow.slug}`, ...start.pathParams.map((name) => `{${name}}`)].join('/')
}

export function generateOpenApi(project: Project, options: GenerateOptions): OpenApiDocument {
  const { projectId, name } = project.settings
  const callables: Callable[] = []
  for (const flow of project.flows.values()) {
    // `http: false`: no route, so no operation.
    if (flow.start?.http) callables.push({ path: runPath(projectId, flow, flow.start), flow, start: flow.start })
  }
  // Plain code-unit order: the same on every machine, whatever the locale.
  callables.sort((a, b) => compareText(a.path, b.path))

  const security = new SecuritySchemes()
  const asyncStarts = callables.filter(({ start }) => start.respond === 'async').map(({ start }) => start)
  const operationIds = operationIdsOf(callables, asyncStarts.length > 0 ? [RESULT_OPERATION_ID] : [])
  const paths: Record<string, OpenApiPathItem> = {}
  for (const { path, flow, start } of callables) {
    const request = getNodeKind(start.node.type)?.openapi?.request?.(start) ?? { parameters: [], body: null }
    const parameters = buildParameters(start, request.parameters)
    const requestBody = request.body ? { required: request.body.required, content: convertedContent(request.body.content) } : undefined
    const cors = startCors(project, start)
    const operation: OpenApiOperation = {
      summary: summaryOf(start),
      ...(flow.description ? { description: flow.description } : {}),
      operationId: operationIds.get(flow.slug)!,
      tags: [name],
      // `[]` says "no auth" explicitly (an operation without `security` would inherit a global one).
      security: start.auth ? [{ [security.nameFor(start.auth)]: [] }] : [],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: buildResponses(flow, start.node, {
        hasAuth: start.auth !== null,
        readsBody: start.method !== 'get',
        rateLimited: project.settings.limits.runsPerMinutePerIp > 0,
        cors: cors ? { credentials: cors.credentials } : null,
        idempotencyHeader: start.idempotency?.header ?? null,
        concurrencyRejects: start.concurrency?.onLimit === 'reject',
        async: start.respond === 'async',
      }),
    }
    paths[path] = { [start.method]: operation }
  }
  // Polling an async run's result (SPEC §12, §20), behind the async Starts' auth.
  if (asyncStarts.length > 0) paths[resultPath(projectId)] = resultPathItem(project, asyncStarts, security)
  // Plain code-unit order again: the result path sits among the run paths.
  const sortedPaths = Object.fromEntries(
    Object.keys(paths)
      .sort(compareText)
      .map((key) => [key, paths[key]!]),
  )

  const securitySchemes = security.toComponents()
  const components: NonNullable<OpenApiDocument['components']> = {}
  if (callables.length > 0) {
    // Copies: the document is handed out, and some tools mutate what they are given.
    components.schemas = { [ERROR_SCHEMA_NAME]: structuredClone(ERROR_SCHEMA) }
    // Each only when an operation refers to it (linters flag unused components): async Starts answer 202, never 500.
    if (callables.some(({ start }) => start.respond !== 'async')) components.schemas[RUN_FAILED_SCHEMA_NAME] = structuredClone(RUN_FAILED_SCHEMA)
    if (asyncStarts.length > 0) {
      components.schemas[ASYNC_ACCEPTED_SCHEMA_NAME] = structuredClone(ASYNC_ACCEPTED_SCHEMA)
      components.schemas[ASYNC_RESULT_SCHEMA_NAME] = structuredClone(ASYNC_RESULT_SCHEMA)
    }
  }
  if (securitySchemes) components.securitySchemes = securitySchemes

  return {
    openapi: '3.0.3',
    info: { title: name, version: '1.0.0' },
    servers: [{ url: options.serverUrl.replace(/\/+$/, '') || '/' }],
    tags: [{ name }],
    paths: sortedPaths,
    ...(Object.keys(components).length > 0 ? { components } : {}),
  }
}

function convertedContent(content: Record<string, JsonSchema>): Record<string, { schema: JsonSchema }> {
  return Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema: toOpenApiSchema(schema) }]))
}

/** The Start's own parameters (its kind's `openapi.request`), then the idempotency key header. */
function buildParameters(start: StartInfo, own: NodeRequestDoc['parameters']): OpenApiParameter[] {
  const declared = own.map((p) => parameter(p.name, p.in, p.schema, p.required))
  // The idempotency key header (SPEC §12), unless the Start declares that header itself.
  const { idempotency } = start
  if (idempotency && !declared.some((p) => p.in === 'header' && p.name.toLowerCase() === idempotency.headerKey)) {
    const description = `Repeats with the same key within ${idempotency.ttlSeconds} s get the first answer again instead of a new run`
    declared.push(parameter(idempotency.header, 'header', { type: 'string', maxLength: 255, description }, false))
  }
  return declared
}

function parameter(name: string, location: OpenApiParameter['in'], property: unknown, required: boolean): OpenApiParameter {
  const schema = isRecord(property) ? toOpenApiSchema(property as JsonSchema) : {}
  return {
    name,
    in: location,
    ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
    required,
    schema,
  }
}
