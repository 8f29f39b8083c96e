// The Run API: `/api/run/<projectId>/<slug>[/{param}...]`, every method. Order of checks (SPEC
// §5.1): flow and path shape (404), method (405), rate limit (429), auth (401), body (413/400),
// then the engine, which validates the inputs (400) and runs the flow.
import type { H3Event } from 'h3'
import { runFlow } from '../../flow/engine.js'
import type { RunInput, RunOutcome } from '../../flow/types.js'
import type { Flow, StartInfo } from '../../project/model.js'
import { checkRunAuth } from '../auth.js'
import { readJsonBody } from '../body.js'
import { clientIp } from '../client.js'
import type { AppContext } from '../context.js'
import { errorResponse, FLOW_NOT_FOUND, INVALID_TOKEN, jsonResponse, STORE_UNAVAILABLE } from '../respond.js'
import { isDangerousKey, parseRunPath, queryRecord } from '../run-path.js'
import { guardStore, isStoreWriteError } from '../store-guard.js'

/** Headers an End node may not set: they describe the transport, not the response. */
const TRANSPORT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade'])

export function runHandler(context: AppContext) {
  const { workspace, rejections, rateLimiter, options } = context

  return async (event: H3Event): Promise<Response> => {
    const reject = (projectId: string | null, status: number, errors: string[], headers: Record<string, string> = {}) => {
      rejections.count(projectId, status)
      return errorResponse(status, errors, headers)
    }

    const path = parseRunPath(event.url.pathname)
    const entry = path ? workspace.get(path.projectId) : undefined
    if (!path || !entry) return reject(null, 404, [FLOW_NOT_FOUND])
    const { project } = entry
    const projectId = project.settings.projectId
    const flow = project.flows.get(path.slug)
    const start = flow?.start
    if (!flow || !start || start.pathParams.length !== path.params.length) return reject(projectId, 404, [FLOW_NOT_FOUND])

    const method = event.req.method.toUpperCase()
    const allowed = start.method.toUpperCase()
    if (method === 'OPTIONS') return new Response(null, { status: 204, headers: { allow: `${allowed}, OPTIONS` } })
    if (method !== allowed) return reject(projectId, 405, ['method not allowed'], { allow: allowed })

    const rate = rateLimiter.hit(projectId, clientIp(event, options), project.settings.limits.runsPerMinutePerIp)
    if (!rate.allowed) return reject(projectId, 429, ['rate limit exceeded'], { 'retry-after': String(rate.retryAfterSeconds) })

    const auth = checkRunAuth(start.auth, event.req.headers, project.secrets)
    if (!auth.ok) return reject(projectId, 401, [INVALID_TOKEN], { 'www-authenticate': auth.challenge })

    let body: unknown
    if (start.inputs.body || method !== 'GET') {
      const read = await readJsonBody(event.req, project.settings.limits.bodyLimitBytes)
      if (!read.ok) return reject(projectId, read.status, [read.error])
      body = read.body
    }

    const store = await workspace.storeFor(projectId)
    if (!store) return reject(projectId, 503, [STORE_UNAVAILABLE])

    const trace = event.url.searchParams.get('_trace') === '1'
    const input: RunInput = {
      body,
      path: Object.fromEntries(start.pathParams.map((name, i) => [name, path.params[i]!])),
      query: queryRecord(event.url.searchParams),
      headers: declaredHeaders(start, event.req.headers),
    }
    let outcome: RunOutcome
    try {
      outcome = await runFlow({ project, flow, store: guardStore(store), trigger: 'http', method, input, trace, signal: options.signal })
    } catch (error) {
      if (isStoreWriteError(error)) return reject(projectId, 503, [STORE_UNAVAILABLE])
      throw error
    }
    return outcomeResponse(outcome, flow, trace, (status) => rejections.count(projectId, status))
  }
}

/**
 * Only the headers the Start declares reach the engine: credentials and cookies never end up in a
 * node's output, a trace or history.
 */
function declaredHeaders(start: StartInfo, headers: Headers): Record<string, string> {
  const schema = start.inputs.headers
  if (!schema) return {}
  const names = new Set<string>()
  const properties = schema.properties
  if (properties && typeof properties === 'object') for (const name of Object.keys(properties)) names.add(name.toLowerCase())
  if (Array.isArray(schema.required)) for (const name of schema.required) if (typeof name === 'string') names.add(name.toLowerCase())
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = headers.get(name)
    if (value !== null && !isDangerousKey(name)) out[name] = value
  }
  return out
}

function outcomeResponse(outcome: RunOutcome, flow: Flow, trace: boolean, countRejection: (status: number) => void): Response {
  if (outcome.kind === 'invalid') {
    countRejection(400)
    return errorResponse(400, outcome.errors)
  }
  if (outcome.kind === 'failed') {
    const errors = [outcome.nodeId ? `node ${outcome.nodeId} failed` : `flow ${flow.slug} failed`]
    const body: Record<string, unknown> = { ok: false, errors, nodeId: outcome.nodeId, runId: outcome.runId }
    if (trace) body.trace = outcome.trace ?? null
    return jsonResponse(500, body, { 'x-run-id': outcome.runId })
  }
  if (trace) {
    // A 204/304 cannot carry a body, so the trace of a run without a response body answers 200.
    const status = nullBodyStatus(outcome.status) ? 200 : outcome.status
    const response = jsonResponse(status, { response: { status: outcome.status, body: outcome.body ?? null }, trace: outcome.trace ?? null })
    response.headers.set('x-run-id', outcome.runId)
    return response
  }
  const noBody = outcome.body === undefined || nullBodyStatus(outcome.status)
  const response = noBody
    ? new Response(null, { status: outcome.status })
    : jsonResponse(outcome.status, outcome.body)
  for (const [name, value] of Object.entries(outcome.headers ?? {})) {
    if (TRANSPORT_HEADERS.has(name.toLowerCase())) continue
    try {
      response.headers.set(name, String(value))
    } catch {
      // An End header with characters HTTP does not allow is left out rather than failing the response.
    }
  }
  response.headers.set('x-run-id', outcome.runId)
  return response
}

function nullBodyStatus(status: number): boolean {
  return status === 204 || status === 205 || status === 304
}
