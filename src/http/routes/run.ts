// The Run API: `/api/run/<projectId>/<slug>[/{param}...]`, every method. Order of checks (SPEC
// §5.1, §11): flow and path shape (404; `http: false` too), preflight/OPTIONS, method (405; HEAD
// on a GET flow is GET without the body), rate limit (429), auth (401; hmac reads the body first,
// 413), body (413/415/400), then the engine, which validates the inputs (400) and runs the flow.
// An async Start (`respond: async`) validates and queues the run instead, answering 202 (async-accept.ts).
import type { IncomingMessage } from 'node:http'
import type { H3Event } from 'h3'
import { FlowctlError, hasErrorCode, httpError } from '../../errors.js'
import { runFlow } from '../../flow/engine.js'
import { maskValue } from '../../flow/mask.js'
import type { RunInput, RunOptions, RunOutcome } from '../../model/run.js'
import type { Store } from '../../model/store.js'
import type { AuthSettings, BodyType, Flow, Project, StartInfo } from '../../model/project.js'
import { acceptAsyncRun } from '../async-accept.js'
import { challengeFor, checkRunAuth, type SignatureUse } from '../auth.js'
import { BODY_ERROR_CODES, isJsonContentType, parseBody, readBodyBytes, readRequestBody } from '../body.js'
import { corsHeaders, flowCors, preflightHeaders } from '../cors.js'
import { isLoopbackRequest } from '../access.js'
import { clientIp, isLoopback } from '../client.js'
import type { AppContext } from '../context.js'
import { noteStoreBack, noteStoreOutage } from '../store-outage.js'
import { countRejections } from '../rejections.js'
import { answerError, sendJson, type HeaderPairs } from '../respond.js'
import { isDangerousKey, parseRunPath, queryRecord } from '../run-path.js'
import { clusterRateDecision } from '../cluster-rate-limit.js'
import { enterRunGuards } from '../run-guards.js'
import { logRejected } from './pages.js'

/** Headers an End node may not set: they describe the transport, not the response. */
const TRANSPORT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade'])

export function runHandler(context: AppContext) {
  const { workspace, rateLimiter, options } = context

  // Answers are text with status and headers on event.res (see respond.ts); only bodiless ones are Responses.
  // Refusals are thrown (FlowctlError) and answered right here, counted for the project on /status:
  // passed on to h3, each would be wrapped in an HTTPError of h3's (which captures a stack) and
  // answered by app.ts's onError a few promise turns later. That is the cost of every request of a
  // flood of 401s or 404s. Other errors still go to onError.
  return async (event: H3Event): Promise<Response | string> => {
    let answer: Response | string
    try {
      answer = await runRoute(event)
    } catch (error) {
      if (!(error instanceof FlowctlError)) throw error
      answer = answerError(event, error, context.rejections)
    }
    // HEAD answers as GET would, without the body.
    return event.req.method === 'HEAD' ? withoutBody(event, answer) : answer
  }

  async function runRoute(event: H3Event): Promise<Response | string> {
    const path = parseRunPath(event.url.pathname)
    const entry = path ? workspace.get(path.projectId) : undefined
    countRejections(event, entry ? entry.project.settings.projectId : null)
    if (!path || !entry) throw httpError('FLOW_NOT_FOUND')
    const { project } = entry
    const projectId = project.settings.projectId
    const flow = project.flows.get(path.slug)
    const start = flow?.start
    if (!flow || !start || !start.http || start.pathParams.length !== path.params.length) {
      // A flow whose file failed to load is named to local callers (as /status does), beside the spec's body.
      const hint = flow ? undefined : isLoopback(clientIp(event, options)) ? brokenFlowHint(project, path.slug) : undefined
      throw httpError('FLOW_NOT_FOUND', undefined, hint ? { fields: { hint } } : {})
    }

    const headers = event.req.headers
    const flowCorsSettings = flowCors(project, start, flow)
    const origin = flowCorsSettings ? headers.get('origin') : null
    const cors = flowCorsSettings ? corsHeaders(flowCorsSettings, origin) : undefined

    const method = event.req.method.toUpperCase()
    if (method === 'OPTIONS') {
      const allowed = allowedMethods(start)
      const preflight = flowCorsSettings && headers.has('access-control-request-method') ? preflightHeaders(flowCorsSettings, origin, allowed) : null
      return new Response(null, { status: 204, headers: preflight ?? { allow: `${allowed}, OPTIONS`, ...cors } })
    }
    // From here on every answer, refusals too, carries the flow's CORS headers.
    if (cors) for (const name in cors) event.res.headers.set(name, cors[name]!)
    const isHead = method === 'HEAD' && start.method === 'get'
    if (!isHead && method !== start.method.toUpperCase())
      throw httpError('METHOD_NOT_ALLOWED', undefined, { headers: { allow: `${allowedMethods(start)}, OPTIONS` } })

    const ip = clientIp(event, options)
    const perMinute = project.settings.limits.runsPerMinutePerIp
    // `cluster`: one budget for every instance on the store (SPEC §12); null: the store is unreachable.
    const rate =
      project.settings.rateLimitScope === 'cluster'
        ? await clusterRateDecision(await workspace.storeFor(projectId), projectId, ip, perMinute)
        : rateLimiter.hit(projectId, ip, perMinute)
    if (!rate) throw httpError('STORE_UNAVAILABLE')
    if (!rate.allowed) throw httpError('RATE_LIMITED', undefined, { headers: { 'retry-after': String(rate.retryAfterSeconds) } })

    // A signature covers the raw bytes, so an hmac flow reads them (413) before the auth check.
    const readsBody = start.inputs.body !== undefined || (method !== 'GET' && !isHead)
    const nodeRequest = event.runtime?.node?.req as IncomingMessage | undefined
    const limit = project.settings.limits.bodyLimitBytes
    let bytes: Uint8Array | undefined
    if (start.auth?.type === 'hmac' && readsBody) {
      const read = await readBodyBytes(event.req, limit, nodeRequest)
      if (!read.ok) throw httpError(BODY_ERROR_CODES[read.status], [read.error])
      bytes = read.bytes
    }
    const auth = checkRunAuth(start.auth, headers, project.secrets, bytes)
    if (!auth.ok) throw httpError('AUTH_REQUIRED', [auth.reason], { headers: { 'www-authenticate': auth.challenge } })
    // A Stripe or Slack signature is accepted once (SPEC §19): a replay within its tolerance is a 401 too.
    if (auth.once) await claimSignatureOnce(context, project, flow.slug, start.auth!, auth.once)

    let body: unknown
    let bodyType: BodyType | undefined
    if (readsBody) {
      const read = bytes ? parseBody(bytes, headers.get('content-type'), start.accept) : await readRequestBody(event.req, limit, start.accept, nodeRequest)
      if (!read.ok) {
        if (read.status === 400) logRejected(context, projectId, flow.slug, [read.error])
        throw httpError(BODY_ERROR_CODES[read.status], [read.error])
      }
      body = read.body
      if (read.type) bodyType = read.type
    }

    const store = await workspace.storeFor(projectId)
    if (!store) {
      noteStoreOutage(context, project, workspace.get(projectId)?.storeError ?? 'not open')
      throw httpError('STORE_UNAVAILABLE')
    }

    // Most calls carry no query string: skip building URLSearchParams for them.
    const search = event.url.search
    const searchParams = search === '' ? null : event.url.searchParams
    // Who may see a trace is the project's `trace` setting (SPEC §17); for others the flag is ignored.
    const rawTraceFlag = searchParams?.get('_trace') ?? null
    const traceFlag = rawTraceFlag !== null && traceAllowed(context, event, project) ? rawTraceFlag : null
    if (traceFlag !== null && !TRACE_VALUES.has(traceFlag)) {
      throw httpError('INPUT_INVALID', [`query/_trace: must be 1 or true (0 or false to turn it off), got "${traceFlag.slice(0, 20)}"`])
    }
    const trace = traceFlag === '1' || traceFlag === 'true'
    const pathValues: Record<string, string> = {}
    // defineProperty, as Object.fromEntries would: a parameter named `__proto__` stays a plain key.
    for (let i = 0; i < start.pathParams.length; i++) {
      Object.defineProperty(pathValues, start.pathParams[i]!, { value: path.params[i]!, enumerable: true, writable: true, configurable: true })
    }
    const headerInputs = declaredHeaders(start, headers)
    const input: RunInput = {
      body,
      path: pathValues,
      query: searchParams ? queryRecord(searchParams) : {},
      headers: headerInputs,
    }
    if (bodyType) input.bodyType = bodyType
    // Async runs (SPEC §12): an idempotency key replays the 202 of the first request (same run id).
    if (start.respond === 'async') {
      const guarded = await enterRunGuards(event, { store, project, flow, start, method, body, headerInputs, cors, concurrency: false })
      if (guarded.kind === 'replay') return guarded.response
      let answer: string
      try {
        answer = await acceptAsyncRun(context, event, { project, flow, store, method, input, cors })
      } catch (error) {
        // No 202 (invalid input, store down): the key is freed, so the sender's retry is taken again.
        await guarded.guards.release()
        throw error
      }
      return guarded.guards.settle(event, answer, false)
    }
    // Idempotency key and concurrency slot (SPEC §12): a replay, 409, 422 or 429 runs nothing.
    const guarded = await enterRunGuards(event, { store, project, flow, start, method, body, headerInputs, cors, signal: options.signal })
    if (guarded.kind === 'replay') return guarded.response
    const { guards } = guarded
    let outcome: RunOutcome
    try {
      const recordRun = recordHistory(store, project.settings.limits.historyRuns)
      const traceparent = event.req.headers.get('traceparent') ?? undefined
      outcome = await runFlow({ project, flow, store, trigger: 'http', method, input, trace, signal: options.signal, recordRun, traceparent })
    } catch (error) {
      await guards.release()
      // The run could not be recorded (STORE_UNAVAILABLE, see recordHistory): onError answers 503.
      if (hasErrorCode(error, 'STORE_UNAVAILABLE')) noteStoreOutage(context, project, error)
      throw error
    }
    noteStoreBack(context, projectId)
    if (outcome.kind === 'invalid') {
      await guards.release()
      logRejected(context, projectId, flow.slug, outcome.errors)
      throw httpError('INPUT_INVALID', outcome.errors)
    }
    return guards.settle(event, outcomeResponse(event, outcome, flow, project, trace, cors), outcome.kind === 'failed')
  }
}

/**
 * Records a valid timestamped signature as used, in the store (shared by every instance on
 * PostgreSQL). Already recorded: a replay, refused as any bad credential. No store: 503 (fail closed).
 */
async function claimSignatureOnce(context: AppContext, project: Project, flow: string, auth: AuthSettings, use: SignatureUse): Promise<void> {
  const projectId = project.settings.projectId
  const store = await context.workspace.storeFor(projectId)
  if (!store) {
    noteStoreOutage(context, project, context.workspace.get(projectId)?.storeError ?? 'not open')
    throw httpError('STORE_UNAVAILABLE')
  }
  if (!(await store.guards.claimSignature(projectId, flow, use.signature, use.expiresAt))) {
    throw httpError('AUTH_REQUIRED', ['invalid signature'], { headers: { 'www-authenticate': challengeFor(auth) } })
  }
}

/**
 * The history write of a Run API call. Whatever the store throws (a closed SQLite database throws a
 * TypeError, not STORE_UNAVAILABLE), the run was not recorded, so it is answered 503, never sent as
 * if it had been (SPEC §5.1: a run whose response was sent is in history).
 */
function recordHistory(store: Store, historyCap: number): NonNullable<RunOptions['recordRun']> {
  return async (record, details, _response, documents) => {
    try {
      // The run's inserted documents commit with its record (one commit per run).
      await store.history.recordRun(record, historyCap, details, documents)
    } catch (error) {
      if (hasErrorCode(error, 'STORE_UNAVAILABLE')) throw error
      throw new FlowctlError('STORE_UNAVAILABLE', `the run could not be recorded: ${(error as Error).message}`, { cause: error })
    }
  }
}

/** `trace: loopback` (default) gives traces to requests from this machine only (socket and Host). */
function traceAllowed(context: AppContext, event: H3Event, project: Project): boolean {
  const access = project.settings.trace
  return access === 'anyone' || (access !== 'never' && isLoopbackRequest(context, event))
}

/** The same status and headers without the body (HEAD); Content-Length tells the GET body's size. */
function withoutBody(event: H3Event, answer: Response | string): Response {
  if (answer instanceof Response) return new Response(null, { status: answer.status, headers: answer.headers })
  const headers = new Headers(event.res.headers)
  headers.set('content-length', String(Buffer.byteLength(answer)))
  return new Response(null, { status: event.res.status ?? 200, headers })
}

/** `Allow` of a flow's route: its method (GET also answers HEAD). */
function allowedMethods(start: StartInfo): string {
  return start.method === 'get' ? 'GET, HEAD' : start.method.toUpperCase()
}

const TRACE_VALUES = new Set(['1', 'true', '0', 'false'])

/**
 * When a flow file of this slug failed to load: a hint naming the file and where its problems are
 * shown. The slug of a broken file is not known for sure, so the file name decides.
 */
function brokenFlowHint(project: Project, slug: string): string | undefined {
  const loaded = new Set([...project.flows.values()].map((flow) => flow.file))
  const broken = project.problems.find((problem) => {
    if (problem.severity !== 'error' || loaded.has(problem.file)) return false
    const base = problem.file
      .split('/')
      .at(-1)!
      .replace(/\.(ya?ml|json)$/i, '')
    return base.toLowerCase() === slug.toLowerCase()
  })
  if (!broken) return undefined
  return `${broken.file} has load errors, so its flow is not served; see /status or run flowctl validate`
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

/** The lower-case header names a Start declares (dangerous keys left out). */
function declaredHeaderNames(start: StartInfo): string[] {
  const schema = start.inputs.headers
  const names = new Set<string>()
  if (schema) {
    const properties = schema.properties
    if (properties && typeof properties === 'object') for (const name of Object.keys(properties)) names.add(name.toLowerCase())
    if (Array.isArray(schema.required)) for (const name of schema.required) if (typeof name === 'string') names.add(name.toLowerCase())
  }
  return [...names].filter((name) => !isDangerousKey(name))
}

function outcomeResponse(
  event: H3Event,
  outcome: Exclude<RunOutcome, { kind: 'invalid' }>,
  flow: Flow,
  project: Project,
  trace: boolean,
  cors: HeaderPairs | undefined,
): Response | string {
  if (outcome.kind === 'failed') {
    const errors = [outcome.nodeId ? `node ${outcome.nodeId} failed` : `flow ${flow.slug} failed`]
    const body: Record<string, unknown> = { ok: false, errors, nodeId: outcome.nodeId, runId: outcome.runId }
    if (trace) body.trace = outcome.trace ?? null
    return sendJson(event, 500, body, { ...cors, 'x-run-id': outcome.runId })
  }
  if (trace) {
    // A 204/304 cannot carry a body, so the trace of a run without a response body answers 200.
    const status = nullBodyStatus(outcome.status) ? 200 : outcome.status
    // Secrets are `***` everywhere in a trace answer, its copy of the response body included (SPEC §5.1).
    const body = maskValue(outcome.body ?? null, project.secrets)
    return sendJson(event, status, { response: { status: outcome.status, body }, trace: outcome.trace ?? null }, { ...cors, 'x-run-id': outcome.runId })
  }
  if (outcome.body === undefined || nullBodyStatus(outcome.status)) {
    // Rare: a Response without a body keeps h3 from adding `content-length: 0` or a text content type.
    const response = new Response(null, { status: outcome.status })
    setEndHeaders(response.headers, outcome.headers)
    setAll(response.headers, cors)
    response.headers.set('x-run-id', outcome.runId)
    return response
  }
  const rawType = nonJsonContentType(outcome.headers)
  let text: string
  if (rawType === null) text = sendJson(event, outcome.status, outcome.body)
  else {
    // The End chose another type (text, HTML, XML): a string body is sent as it is.
    event.res.status = outcome.status
    text = typeof outcome.body === 'string' ? outcome.body : JSON.stringify(outcome.body)
  }
  const headers = event.res.headers
  setEndHeaders(headers, outcome.headers)
  setAll(headers, cors)
  headers.set('x-run-id', outcome.runId)
  return text
}

function setAll(target: Headers, headers: HeaderPairs | undefined): void {
  if (headers) for (const name in headers) target.set(name, headers[name]!)
}

/** The End's content-type when it sets one that is not JSON; null otherwise. */
function nonJsonContentType(headers: Record<string, string> | undefined): string | null {
  if (!headers) return null
  for (const name in headers) {
    if (name.length === 12 && name.toLowerCase() === 'content-type') {
      const value = headers[name]!
      return value === '' || isJsonContentType(value) ? null : value
    }
  }
  return null
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
