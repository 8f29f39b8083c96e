// The h3 app of `flowctl serve`: routes in routes/*.ts, one request log line per request, and the
// one error handler: routes and helpers throw FlowctlError (src/errors.ts: code → status, message,
// headers) and `errorAnswer` below renders every error answer; anything else is a logged 500 that
// never shows a stack trace or a secret to the client.
import { H3, HTTPError, type EventHandler, type H3Event } from 'h3'
import { FlowctlError, hasErrorCode, httpError } from '../errors.js'
import type { AppContext, AppOptions } from './context.js'
import { RateLimiter } from './rate-limit.js'
import { ClientClosedRequest } from './body.js'
import { countRejections, RejectionCounter } from './rejections.js'
import { answerError } from './respond.js'
import { docsAssetHandler, docsPageHandler } from './routes/docs.js'
import { openApiHandler } from './routes/openapi.js'
import { runHandler } from './routes/run.js'
import { runHandlerById, runsHandler } from './routes/runs.js'
import { eventsHandler } from './routes/events.js'
import { editorAssetHandler, editorPageHandler, kindsHandler, portsHandler } from './routes/editor.js'
import { flowCheckHandler, flowCreateHandler, flowDeleteHandler, flowReadHandler, flowWriteHandler } from './routes/flows.js'
import { dashboardHandler, flowFormHandler, flowPageHandler, replayFormHandler, runPageHandler } from './routes/pages.js'
import { replayHandler } from './routes/replay.js'
import { resultHandler } from './routes/result.js'
import { resumeHandler, withPageAnswers } from './routes/resume.js'
import { signInHandler, signInPageHandler, signOutHandler } from './routes/sign-in.js'
import { logRunEvents } from './run-log.js'
import { statusJsonHandler, statusPageHandler } from './routes/status.js'
import { metricsHandler } from './routes/metrics.js'
import { TICK_FAILURE_WINDOW_MS, tickHandler } from './routes/tick.js'
import { UsersCache } from './sign-in.js'
import type { Workspace } from '../serve/workspace.js'

export type { AppOptions } from './context.js'

const STARTED = Symbol('flowctl.started')

export function createApp(workspace: Workspace, options: AppOptions): H3 {
  const write = options.log ?? ((line: string) => void process.stderr.write(line + '\n'))
  const context: AppContext = {
    workspace,
    options,
    rateLimiter: new RateLimiter(),
    tickFailures: new RateLimiter(Date.now, 10_000, TICK_FAILURE_WINDOW_MS),
    rejections: new RejectionCounter((projectId, status) => workspace.metrics.countRejection(projectId, status)),
    users: new UsersCache([options.usersFile, ...(options.projectUsersFiles ?? [])]),
    log: (line, always = false) => {
      if (always || !options.quiet) write(line)
    },
  }

  // The request-line hooks only when lines are written: h3 chains three promises per request for
  // an onResponse hook even when it does nothing.
  const requestLog = options.quiet
    ? {}
    : {
        onRequest(event: H3Event) {
          ;(event.context as Record<symbol, number>)[STARTED] = performance.now()
        },
        onResponse(response: Response, event: H3Event) {
          context.log(requestLine(event, response))
        },
      }
  logRunEvents(context)

  const app = new H3({
    // Unexpected errors are logged by onError below (without the request's headers or body).
    silent: true,
    ...requestLog,
    onError(error, event) {
      return errorAnswer(context, error, event)
    },
  })

  app.all('/api/run/**', runHandler(context))
  const routes = new RouteTable(app)
  routes.add('GET', '/api/openapi/:projectId', openApiHandler(context))
  routes.add('GET', '/api/result/:projectId/:runId', resultHandler(context))
  // Its preflight: answered by the route itself, with the async Starts' CORS (a method's own route wins over the 405).
  app.options('/api/result/:projectId/:runId', resultHandler(context))
  routes.add('GET', '/api/runs/:projectId', runsHandler(context))
  routes.add('GET', '/api/runs/:projectId/:runId', runHandlerById(context))
  routes.add('POST', '/api/replay/:projectId/:runId', replayHandler(context))
  routes.add('GET', '/api/events', eventsHandler(context))
  routes.add('GET', '/api/resume/:projectId/:runId', withPageAnswers(resumeHandler(context)))
  routes.add('POST', '/api/resume/:projectId/:runId', withPageAnswers(resumeHandler(context)))
  routes.add('GET', '/api/flows/:projectId/:slug', flowReadHandler(context))
  routes.add('PUT', '/api/flows/:projectId/:slug', flowWriteHandler(context))
  routes.add('DELETE', '/api/flows/:projectId/:slug', flowDeleteHandler(context))
  routes.add('POST', '/api/flows/:projectId', flowCreateHandler(context))
  routes.add('POST', '/api/flows/:projectId/:slug/check', flowCheckHandler(context))
  routes.add('GET', '/api/cron/tick', tickHandler(context))
  routes.add('POST', '/api/cron/tick', tickHandler(context))
  routes.add('GET', '/api/status', statusJsonHandler(context))
  routes.add('GET', '/metrics', metricsHandler(context))
  routes.add('GET', '/status', statusPageHandler(context))
  routes.add('GET', '/docs/assets/:file', docsAssetHandler())
  routes.add('GET', '/docs/:projectId', docsPageHandler(context))
  routes.add('GET', '/', dashboardHandler(context))
  routes.add('GET', '/sign-in', signInPageHandler())
  routes.add('POST', '/sign-in', signInHandler(context))
  routes.add('POST', '/sign-out', signOutHandler())
  routes.add('GET', '/flows/:projectId/:slug', flowPageHandler(context))
  routes.add('POST', '/flows/:projectId/:slug', flowFormHandler(context))
  routes.add('GET', '/runs/:projectId/:runId', runPageHandler(context))
  routes.add('POST', '/runs/:projectId/:runId/replay', replayFormHandler(context))
  // The browser editor (routes/editor.ts); the flow files themselves go through the flows API.
  routes.add('GET', '/edit/:projectId', editorPageHandler(context))
  routes.add('GET', '/edit/:projectId/:slug', editorPageHandler(context))
  routes.add('GET', '/edit/_assets/:file', editorAssetHandler())
  routes.add('GET', '/api/editor/kinds', kindsHandler(context))
  routes.add('POST', '/api/editor/ports', portsHandler(context))
  app.all('/**', (event) => {
    // A known path asked with a method nobody registered: 405 with Allow, found only on this path.
    const allow = routes.allowedAt(event.url.pathname)
    if (allow) throw httpError('METHOD_NOT_ALLOWED', undefined, { headers: { allow } })
    throw notFound(event)
  })
  return app
}

/**
 * The routes outside the Run API (SPEC §20 "HTTP"): every GET route also answers HEAD (its GET
 * handler runs; Node sends the status and headers without the body), and a known path asked with
 * another method answers 405 with `Allow`. The 405 is worked out by the not-found handler
 * (allowedAt), not by a catch-all route per path: those made every Run API request's route lookup
 * dearer (~7 µs of ~105 µs of server CPU per request, docs/performance.md).
 */
class RouteTable {
  readonly #methods = new Map<string, string[]>()
  #patterns: { pattern: RegExp; allow: string }[] | null = null

  constructor(private readonly app: H3) {}

  add(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, handler: EventHandler): void {
    this.app.on(method, path, handler)
    const methods = this.#methods.get(path) ?? []
    methods.push(method)
    if (method === 'GET') {
      this.app.on('HEAD', path, handler)
      methods.push('HEAD')
    }
    this.#methods.set(path, methods)
  }

  /** The `Allow` value of the registered path that `pathname` matches, or null. */
  allowedAt(pathname: string): string | null {
    this.#patterns ??= [...this.#methods].map(([path, methods]) => ({
      // `:name` is one segment; everything else is literal.
      pattern: new RegExp(
        `^${path
          .split('/')
          .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/')}/?$`,
      ),
      allow: methods.join(', '),
    }))
    return this.#patterns.find(({ pattern }) => pattern.test(pathname))?.allow ?? null
  }
}

/** No route: a Run API path is a flow not found (counted on /status), anything else not found. */
function notFound(event: H3Event): FlowctlError {
  if (event.url.pathname === '/api/run' || event.url.pathname.startsWith('/api/run/')) {
    countRejections(event, null)
    return httpError('FLOW_NOT_FOUND')
  }
  return httpError('NOT_FOUND')
}

/**
 * Every error answer. A FlowctlError thrown by a route is rendered from the catalog (and counted on
 * /status when the route counts its refusals); h3's own errors (no route, a malformed escape) keep
 * their status; anything else is a 500 `internal error`, logged once without the request's headers
 * or body.
 */
function errorAnswer(context: AppContext, error: HTTPError, event: H3Event): string {
  let known = knownError(error, event)
  if (!known) {
    const cause = error.cause instanceof Error ? error.cause : error
    context.log(`error ${event.req.method} ${event.url.pathname}: ${cause.name}: ${cause.message}`, true)
    known = new FlowctlError('INTERNAL')
  }
  return answerError(event, known, context.rejections)
}

/** The FlowctlError an error stands for, or null when it is unexpected (a 500). */
function knownError(error: HTTPError, event: H3Event): FlowctlError | null {
  const cause = error.cause
  if (cause instanceof FlowctlError) return cause
  // A store outage is answered 503 wherever it surfaces (also wrapped).
  if (hasErrorCode(cause, 'STORE_UNAVAILABLE')) return httpError('STORE_UNAVAILABLE', undefined, { cause })
  // A client that hung up mid-body is no server error: a plain 400 (it will not read it anyway).
  if (cause instanceof ClientClosedRequest) return httpError('BAD_REQUEST', [cause.message])
  if (error.unhandled || error.status < 400 || error.status >= 500) return null
  if (error.status === 404) return notFound(event)
  // h3 itself only answers 404 and 400 (a malformed escape); no h3 helper that throws others is used.
  return httpError('BAD_REQUEST', error.status === 400 ? undefined : ['request rejected'], { cause: error })
}

function requestLine(event: H3Event, response: Response): string {
  const started = (event.context as Record<symbol, number | undefined>)[STARTED]
  const ms = started === undefined ? 0 : performance.now() - started
  const runId = response.headers.get('x-run-id')
  // The path only: query strings can carry secrets, and headers and bodies are never logged.
  return `${event.req.method} ${event.url.pathname} ${response.status} ${ms.toFixed(1)}ms${runId ? ` run ${runId}` : ''}`
}
