// The pages of SPEC §14: `/` (dashboard), `/flows/<projectId>/<slug>` (GET: graph, route, runs and
// the run form; POST: the form's run), `/runs/<projectId>/<runId>` (the run inspector) and
// `POST /runs/<projectId>/<runId>/replay` (its Replay button). Reading needs a loopback request or
// the viewer role; running and replaying need a loopback request or the editor or owner role.
import { getQuery, getRouterParam, type H3Event } from 'h3'
import { ERROR_CATALOG, httpError, isFlowctlError } from '../../errors.js'
import { capErrorList } from '../../flow/reason.js'
import { isReplayRefusal, replayRun } from '../../flow/replay.js'
import { waitingFacts } from '../../flow/park.js'
import { readRequestText } from '../body.js'
import { callerOf, isCrossSite, projectAccess, readableEntries, type Need, type ProjectAccess } from '../access.js'
import type { AppContext } from '../context.js'
import { html } from '../html.js'
import { jsonResponse } from '../respond.js'
import { buildStatus } from '../status-data.js'
import { renderDashboard } from '../pages/dashboard.js'
import { renderFlowPage } from '../pages/flow-page.js'
import { readFormFields, runFromForm } from '../pages/form-run.js'
import { messagePage } from '../pages/layout.js'
import { renderRunPage } from '../pages/run-page.js'

const FLOW_RUNS = 20
/** Replays of a run linked from its page (newest first). */
const REPLAYS_SHOWN = 20

export function dashboardHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const caller = await callerOf(context, event)
    const readable = new Set(readableEntries(context, caller).map((entry) => entry.project.settings.projectId))
    const view = await buildStatus(context, caller.kind === 'anonymous' ? { kind: 'public' } : { kind: 'projects', projectIds: readable })
    const projects = new Map(context.workspace.list().map((entry) => [entry.project.settings.projectId, entry.project]))
    return renderDashboard(view, projects, caller.kind !== 'anonymous')
  }
}

/** The access check of a page: a refusal is a page saying why (sign in, role, unknown project). */
async function pageAccess(context: AppContext, event: H3Event, need: Need): Promise<ProjectAccess> {
  return projectAccess(context, event, getRouterParam(event, 'projectId') ?? '', need)
}

function refusalPage(access: Extract<ProjectAccess, { ok: false }>): Response {
  const reasons: Record<number, string> = {
    401: 'Sign in at /sign-in with a user token (from "flowctl users add"), or open this page on the server\'s own machine.',
    403: 'Your user has no role on this project that allows this.',
    404: 'This server has no such project.',
  }
  const { httpStatus, errors, headers } = access.error
  const response = messagePage(
    httpStatus,
    httpStatus === 401 ? 'Sign-in needed' : httpStatus === 403 ? 'Not allowed' : 'Not found',
    reasons[httpStatus] ?? errors.join(', '),
  )
  for (const [name, value] of Object.entries(headers ?? {})) response.headers.set(name, value)
  return response
}

export function flowPageHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const access = await pageAccess(context, event, 'read')
    if (!access.ok) return refusalPage(access)
    const { project } = access.entry
    const flow = project.flows.get(getRouterParam(event, 'slug') ?? '')
    if (!flow) return messagePage(404, 'Not found', html`Project ${project.settings.projectId} has no flow with this name.`)
    const store = await context.workspace.storeFor(project.settings.projectId)
    const runs = store ? await store.history.listRuns({ projectId: project.settings.projectId, flow: flow.slug, limit: FLOW_RUNS }).catch(() => []) : []
    const canRun = (await projectAccess(context, event, project.settings.projectId, 'run')).ok
    return renderFlowPage({ project, flow, runs, canRun })
  }
}

/** POST from the run form: JSON for the page's script (`Accept: application/json`), else the page again. */
export function flowFormHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const wantsJson = (event.req.headers.get('accept') ?? '').includes('application/json')
    const access = await pageAccess(context, event, 'run')
    if (!access.ok) {
      if (wantsJson) throw access.error
      return refusalPage(access)
    }
    if (isCrossSite(event)) throw httpError('FORBIDDEN', ['cross-site request refused'])
    const { project } = access.entry
    const projectId = project.settings.projectId
    const flow = project.flows.get(getRouterParam(event, 'slug') ?? '')
    if (!flow?.start) {
      if (wantsJson) throw httpError('FLOW_NOT_FOUND')
      return messagePage(404, 'Not found', 'This flow cannot be run from here.')
    }
    const text = await readRequestText(event, project.settings.limits.bodyLimitBytes)
    if (text === null) throw httpError('BODY_TOO_LARGE')
    const store = await context.workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    const fields = readFormFields(text)
    const answer = await runFromForm({ project, flow, store, fields, signal: context.options.signal })
    if (answer.status === 400) logRejected(context, projectId, flow.slug, answer.errors ?? [])
    if (wantsJson) return jsonResponse(200, answer, { 'cache-control': 'no-store' })
    const runs = await store.history.listRuns({ projectId, flow: flow.slug, limit: FLOW_RUNS }).catch(() => [])
    return renderFlowPage({ project, flow, runs, canRun: true, sent: fields, answer })
  }
}

export function runPageHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const access = await pageAccess(context, event, 'read')
    if (!access.ok) return refusalPage(access)
    const { project } = access.entry
    const projectId = project.settings.projectId
    const store = await context.workspace.storeFor(projectId)
    if (!store) return messagePage(503, 'Store unavailable', 'The run history of this project cannot be read right now.')
    const run = await store.history.getRun(projectId, getRouterParam(event, 'runId') ?? '')
    if (!run)
      return messagePage(
        404,
        'Not found',
        html`Project ${projectId} has no run with this id (history keeps the newest ${project.settings.limits.historyRuns}).`,
      )
    const canRun = (await projectAccess(context, event, projectId, 'run')).ok
    // A replay runs the same flow after its original: the flow's time index finds them.
    const replays = await store.history.listRuns({ projectId, flow: run.flow, replayOf: run.id, after: run.startedAt, limit: REPLAYS_SHOWN }).catch(() => [])
    // A parked run (SPEC §22): how it waits, and its resume link for those who may run the flow.
    const waiting = run.status === 'waiting' ? await waitingFacts(store.waits, projectId, run.id, canRun).catch(() => null) : null
    return renderRunPage({ project, run, flow: project.flows.get(run.flow), canRun, replays, waiting })
  }
}

/** The Replay button (a plain form): replays, then shows the new run (303 See Other). `?from=failed`: the "Retry from failed node" button. */
export function replayFormHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const access = await pageAccess(context, event, 'run')
    if (!access.ok) return refusalPage(access)
    if (isCrossSite(event)) return messagePage(403, 'Not allowed', "A replay must be started from this server's own pages.")
    const { project } = access.entry
    const projectId = project.settings.projectId
    const store = await context.workspace.storeFor(projectId)
    if (!store) return messagePage(503, 'Store unavailable', 'The run history of this project cannot be read right now.')
    try {
      const from = getQuery(event).from === 'failed' ? 'failed' : undefined
      const runId = getRouterParam(event, 'runId') ?? ''
      const { outcome } = await replayRun({ project, store, runId, trigger: 'http', signal: context.options.signal, from })
      if (outcome.kind === 'invalid') {
        return messagePage(
          400,
          'Replay refused',
          `The recorded input does not pass the flow's current input schemas: ${capErrorList(outcome.errors).join('; ')}`,
        )
      }
      return new Response(null, { status: 303, headers: { location: `/runs/${encodeURIComponent(projectId)}/${encodeURIComponent(outcome.runId)}` } })
    } catch (error) {
      // A refusal says why; any other error (a store outage) only its catalog message, since its own may name a server.
      if (isReplayRefusal(error)) return messagePage(error.httpStatus, 'Replay not possible', error.message)
      if (isFlowctlError(error)) return messagePage(error.httpStatus, 'Replay not possible', ERROR_CATALOG[error.code].message)
      throw error
    }
  }
}

/** SPEC §14's terminal line for a 400: the error strings, never the values sent. */
export function logRejected(context: AppContext, projectId: string, slug: string, errors: string[]): void {
  context.log(`400 ${projectId}/${slug}: ${capErrorList(errors).join('; ')}`)
}
