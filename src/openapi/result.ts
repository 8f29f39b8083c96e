// `GET /api/result/<projectId>/{runId}` (SPEC §12, §20): every project with an async Start documents
// it, so a typed client can poll the run its 202 queued. Its security is the async Starts' auth: the
// route checks the auth of the Start whose run it is.
import { startCors, type Project, type StartInfo } from '../model/project.js'
import { RESULT_OPERATION_ID } from '../project/operation-names.js'
import { addErrorResponse, ASYNC_RESULT_SCHEMA_NAME, corsHeaders, ERROR_SCHEMA_NAME, header, sortedResponses } from './responses.js'
import type { SecuritySchemes } from './security.js'
import type { OpenApiOperation, OpenApiPathItem, OpenApiResponse } from './types.js'

export function resultPath(projectId: string): string {
  return `/api/result/${projectId}/{runId}`
}

export function resultPathItem(project: Project, asyncStarts: readonly StartInfo[], security: SecuritySchemes): OpenApiPathItem {
  const { settings } = project
  // Alternatives, one per distinct auth; `{}` (no credential) when some async Start is open.
  const requirements = new Map<string, Record<string, string[]>>()
  for (const start of asyncStarts) {
    const requirement = start.auth ? { [security.nameFor(start.auth)]: [] } : {}
    requirements.set(JSON.stringify(requirement), requirement)
  }
  const alternatives = [...requirements.values()]
  const hasAuth = asyncStarts.some((start) => start.auth !== null)
  const corsOfStarts = asyncStarts.map((start) => startCors(project, start))
  const cors = corsOfStarts.some((c) => c !== null) ? corsHeaders({ credentials: corsOfStarts.some((c) => c?.credentials) }) : {}

  const responses: Record<string, OpenApiResponse> = {
    200: {
      description: 'The state of the run and, once it finished, its answer',
      headers: { 'Cache-Control': header('no-store'), ...cors },
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${ASYNC_RESULT_SCHEMA_NAME}` } } },
    },
  }
  if (hasAuth) addErrorResponse(responses, 401, 'Unauthorized', ERROR_SCHEMA_NAME, { 'WWW-Authenticate': header('The credential expected'), ...cors })
  addErrorResponse(responses, 404, 'No such run in this project', ERROR_SCHEMA_NAME, cors)
  if (settings.limits.runsPerMinutePerIp > 0) {
    addErrorResponse(responses, 429, 'Rate limit exceeded', ERROR_SCHEMA_NAME, {
      'Retry-After': { description: 'Seconds until the next minute', schema: { type: 'integer' } },
      ...cors,
    })
  }
  addErrorResponse(responses, 503, 'Store unavailable', ERROR_SCHEMA_NAME, cors)

  const operation: OpenApiOperation = {
    summary: 'Result of an async run',
    description: 'Poll the Location of a 202 answer: queued, running, then success or error with the response the flow gave.',
    operationId: RESULT_OPERATION_ID,
    tags: [settings.name],
    // A lone `{}` means "no credential": written `[]` as for any open operation.
    security: alternatives.length === 1 && Object.keys(alternatives[0]!).length === 0 ? [] : alternatives,
    parameters: [{ name: 'runId', in: 'path', description: 'The runId of the 202 answer', required: true, schema: { type: 'string' } }],
    responses: sortedResponses(responses),
  }
  return { get: operation }
}
