// The Run API: `/api/run/<projectId>/<slug>[/{param}...]`, every method. Order of checks (SPEC
// §5.1): flow and path shape (404), method (405), rate limit (429), auth (401), body (413/400),
// then the engine, which validates the inputs (400) and runs the flow.
import type { IncomingMessage } from 'node:http'
import type { H3Event } from 'h3'
import { runFlow } from '../../flow/engine.js'
import type { RunInput, RunOutcome } from '../../flow/types.js'
import type { Flow, StartInfo } from '../../project/model.js'
import { checkRunAuth } from '../auth.js'
import { readJsonBody } from '../body.js'
import { clientIp } from '../client.js'
import type { AppContext } from '../context.js'
import { FLOW_NOT_FOUND, INVALID_TOKEN, sendError, sendJson, STORE_UNAVAILABLE } from '../respond.js'
import { isDangerousKey, parseRunPath, queryRecord } from '../run-path.js'
import { guardStore, isStoreWriteError } from '../store-guard.js'
import { logRejected } from './pages.js'

/** Headers an End node may not set: they describe the transport, not the response. */
const TRANSPORT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade'])

export function runHandler(context: AppContext) {
  const { workspace, rejections, rateLimiter, options } = context

  // Answers are text with status and headers on event.res (see respond.ts); only bodiless ones are Responses.
  return async (event: H3Event): Promise<Response | string> => {
    const reject = (projectId: string | null, status: number, errors: string[], headers?: Record<string, string>) => {
      rejections.count(projectId, status)
      return sendError(event, status, errors, headers)
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
    const allowed = allowedMethod(start)
    if (method === 'OPTIONS') return new Response(null, { status: 204, headers: { allow: `${allowed}, OPTIONS` } })
    if (method !== allowed) return reject(projectId, 405, ['method not allowed'], { allow: allowed })

    const rate = rateLimiter.hit(projectId, clientIp(event, options), project.settings.limits.runsPerMinutePerIp)
    if (!rate.allowed) return reject(projectId, 429, ['rate limit exceeded'], { 'retry-after': String(rate.retryAfterSeconds) })

    const headers = event.req.headers
    const auth = checkRunAuth(start.auth, headers, project.secrets)
    if (!auth.ok) return reject(projectId, 401, [INVALID_TOKEN], { 'www-authenticate': auth.challenge })

    let body: unknown
    if (start.inputs.body || method !== 'GET') {
      const read = await readJsonBody(event.req, project.settings.limits.bodyLimitBytes, event.runtime?.node?.req as IncomingMessage | undefined)
      if (!read.ok) {
        if (read.status === 400) logRejected(context, projectId, flow.slug, [read.error])
        return reject(projectId, read.status, [read.error])
      }
      body = read.body
    }

    const store = await workspace.storeFor(projectId)
    if (!store) return reject(projectId, 503, [STORE_UNAVAILABLE])

    // Most calls carry no query string: skip building URLSearchParams for them.
    const search = event.url.search
    const searchParams = search === '' ? null : event.url.searchParams
    const trace = searchParams?.get('_trace') === '1'
    const pathValues: Record<string, string> = {}
    // defineProperty, as Object.fromEntries would: a parameter named `__proto__` stays a plain key.
    for (let i = 0; i < start.pathParams.length; i++) {
      Object.defineProperty(pathValues, start.pathParams[i]!, { value: path.params[i]!, enumerable: true, writable: true, configurable: true })
    }
    const input: RunInput = {
      body,
      path: pathValues,
      query: searchParams ? queryRecord(searchParams) : {},
      headers: declaredHeaders(start, headers),
    }
    let outcome: RunOutcome
    try {
      outcome = await runFlow({ project, flow, store: guardStore(store), trigger: 'http', method, input, trace, signal: options.signal })
    } catch (error) {
      if (isStoreWriteError(error)) return reject(projectId, 503, [STORE_UNAVAILABLE])
      throw error
    }
    if (outcome.kind === 'invalid') {
      logRejected(context, projectId, flow.slug, outcome.errors)
      return reject(projectId, 400, outcome.errors)
    }
    return outcomeResponse(event, outcome, flow, trace)
  }
}

/** The Start's method in capitals, worked out once per flow version. */
const allowedMethods = new WeakMap<StartInfo, string>()
function allowedMethod(start: StartInfo): string {
  let method = allowedMethods.get(start)
  if (method === undefined) {
    method = start.method.toUpperCase()
    allowedMethods.set(start, method)
  }
  return method
}

/**
 * Only the headers the Start declares reach the engine: credentials and cookies never end up in a
 * node's output, a trace or history.
 */
function declaredHeaders(start: StartInfo, headers: Headers): Record<string, string> {
  const names = declaredHeaderNames(start)
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = headers.get(name)
    if (value !== null) out[name] = value
  }
  return out
}

/** The lower-case header names a Start declares (dangerous keys left out), once per flow version. */
const headerNamesByStart = new WeakMap<StartInfo, string[]>()
function declaredHeaderNames(start: StartInfo): string[] {
  let cached = headerNamesByStart.get(start)
  if (cached) return cached
  const schema = start.inputs.headers
  const names = new Set<string>()
  if (schema) {
    const properties = schema.properties
    if (properties && typeof properties === 'object') for (const name of Object.keys(properties)) names.add(name.toLowerCase())
    if (Array.isArray(schema.required)) for (const name of schema.required) if (typeof name === 'string') names.add(name.toLowerCase())
  }
  cached = [...names].filter((name) => !isDangerousKey(name))
  headerNamesByStart.set(start, cached)
  return cached
}

function outcomeResponse(event: H3Event, outcome: Exclude<RunOutcome, { kind: 'invalid' }>, flow: Flow, trace: boolean): Response | string {
  if (outcome.kind === 'failed') {
    const errors = [outcome.nodeId ? `node ${outcome.nodeId} failed` : `flow ${flow.slug} failed`]
    const body: Record<string, unknown> = { ok: false, errors, nodeId: outcome.nodeId, runId: outcome.runId }
    if (trace) body.trace = outcome.trace ?? null
    return sendJson(event, 500, body, { 'x-run-id': outcome.runId })
  }
  if (trace) {
    // A 204/304 cannot carry a body, so the trace of a run without a response body answers 200.
    const status = nullBodyStatus(outcome.status) ? 200 : outcome.status
    return sendJson(event, status, { response: { status: outcome.status, body: outcome.body ?? null }, trace: outcome.trace ?? null }, { 'x-run-id': outcome.runId })
  }
  if (outcome.body === undefined || nullBodyStatus(outcome.status)) {
    // Rare: a Response without a body keeps h3 from adding `content-length: 0` or a text content type.
    const response = new Response(null, { status: outcome.status })
    setEndHeaders(response.headers, outcome.headers)
    response.headers.set('x-run-id', outcome.runId)
    return response
  }
  const text = sendJson(event, outcome.status, outcome.body)
  const headers = event.res.headers
  setEndHeaders(headers, outcome.headers)
  headers.set('x-run-id', outcome.runId)
  return text
}

/** The End node's headers, except transport ones. */
function setEndHeaders(target: Headers, headers: Record<string, string> | undefined): void {
  if (!headers) return
  for (const name of Object.keys(headers)) {
    if (TRANSPORT_HEADERS.has(name.toLowerCase())) continue
    try {
      target.set(name, String(headers[name]))
    } catch {
      // An End header with characters HTTP does not allow is left out rather than failing the response.
    }
  }
}

function nullBodyStatus(status: number): boolean {
  return status === 204 || status === 205 || status === 304
}
