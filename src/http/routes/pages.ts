// The pages of SPEC §14: `/` (dashboard), `/flows/<projectId>/<slug>` (GET: graph, route, runs and
// the run form; POST: the form's run), `/runs/<projectId>/<runId>` (the run inspector) and
// `POST /runs/<projectId>/<runId>/replay` (its Replay button). Reading needs a loopback request or
// the viewer role; running and replaying need a loopback request or the editor or owner role.
import { getQuery, getRouterParam, type H3Event } from 'h3'
import { ERROR_CATALOG, httpError } from '../../errors.js'
import { capErrorList } from '../../flow/reason.js'
import { isReplayRefusal, replayRun } from '../../flow/replay.js'
import { waitingFacts } from '../../flow/park.js'
import { readRequestText } from '../body.js'
import { callerMay, callerOf, isCrossSite, projectAccess, readableEntries, type Caller, type Need } from '../access.js'
import type { AppContext } from '../context.js'
import { jsonResponse } from '../respond.js'
import { buildStatus } from '../status-data.js'
import type { Project } from '../../model/project.js'
import type { RunOutcome } from '../../model/run.js'
import { renderDashboard } from '../pages/dashboard.js'
import { renderFlowPage } from '../pages/flow-page.js'
import { readFormFields, runFromForm } from '../pages/form-run.js'
import { pageRoute, wantsJson } from '../pages/error-page.js'
import { renderRunPage } from '../pages/run-page.js'
import { logRejected } from '../run-log.js'

const FLOW_RUNS = 20
/** Replays of a run linked from its page (newest first). */
const REPLAYS_SHOWN = 20

export function dashboardHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const caller = await callerOf(context, event)
    const readable = new Set(readableEntries(context, caller).map((entry) => entry.project.settings.projectId))
    const view = await buildStatus(context, caller.kind === 'anonymous' ? { kind: 'public' } : { kind: 'projects', projectIds: readable })
    const projects = new Map(context.workspace.list().map((entry) => [entry.project.settings.projectId, entry.project]))
    // A viewer following an edit link would only meet the editor's 403: the links are for editors.
    const editable = new Set([...readable].filter((projectId) => callerMay(caller, projectId, 'edit')))
    return renderDashboard(view, projects, { signedIn: caller.kind !== 'anonymous', editable })
  }
}

/**
 * The access check of a page: a refusal is thrown, and the error page says why (sign in, role,
 * unknown project). The caller comes back too: what else it may do (run, edit) decides the buttons
 * and links, without a second check that would count a refusal on /status.
 */
async function pageAccess(context: AppContext, event: H3Event, need: Need): Promise<{ project: Project; caller: Caller }> {
  const access = await projectAccess(context, event, getRouterParam(event, 'projectId') ?? '', need)
  if (!access.ok) throw access.error
  return { project: access.entry.project, caller: access.caller }
}

export function flowPageHandler(context: AppContext) {
  return pageRoute(async (event) => {
    const { project, caller } = await pageAccess(context, event, 'read')
    const projectId = project.settings.projectId
    const flow = project.flows.get(getRouterParam(event, 'slug') ?? '')
    if (!flow) throw httpError('FLOW_NOT_FOUND', [`Project ${projectId} has no flow with this name.`])
    const store = await context.workspace.storeFor(projectId)
    const runs = store ? await store.history.listRuns({ projectId, flow: flow.slug, limit: FLOW_RUNS }).catch(() => []) : []
    return renderFlowPage({ project, flow, runs, canRun: callerMay(caller, projectId, 'run'), canEdit: callerMay(caller, projectId, 'edit') })
  })
}

/** POST from the run form: JSON for the page's script (`Accept: application/json`), else the page again. */
export function flowFormHandler(context: AppContext) {
  return pageRoute(async (event) => {
    const { project, caller } = await pageAccess(context, event, 'run')
    if (isCrossSite(event)) throw httpError('FORBIDDEN', ['cross-site request refused'])
    const projectId = project.settings.projectId
    const flow = project.flows.get(getRouterParam(event, 'slug') ?? '')
    if (!flow?.start) throw httpError('FLOW_NOT_FOUND', wantsJson(event) ? undefined : ['This flow cannot be run from here.'])
    const text = await readRequestText(event, project.settings.limits.bodyLimitBytes)
    if (text === null) throw httpError('BODY_TOO_LARGE')
    const store = await context.workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    const fields = readFormFields(text)
    const answer = await runFromForm({ project, flow, store, fields, signal: context.options.signal })
    if (answer.status === ERROR_CATALOG.INPUT_INVALID.httpStatus) logRejected(context, projectId, flow.slug, answer.errors ?? [])
    if (wantsJson(event)) return jsonResponse(200, answer, { 'cache-control': 'no-store' })
    const runs = await store.history.listRuns({ projectId, flow: flow.slug, limit: FLOW_RUNS }).catch(() => [])
    return renderFlowPage({ project, flow, runs, canRun: true, canEdit: callerMay(caller, projectId, 'edit'), sent: fields, answer })
  })
}

export function runPageHandler(context: AppContext) {
  return pageRoute(async (event) => {
    const { project, caller } = await pageAccess(context, event, 'read')
    const projectId = project.settings.projectId
    const store = await context.workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    const run = await store.history.getRun(projectId, getRouterParam(event, 'runId') ?? '')
    if (!run) {
      const kept = project.settings.limits.historyRuns
      throw httpError('RUN_NOT_FOUND', [`Project ${projectId} has no run with this id (history keeps the newest ${kept}).`])
    }
    const canRun = callerMay(caller, projectId, 'run')
    // A replay runs the same flow after its original: the flow's time index finds them.
    const replays = await store.history.listRuns({ projectId, flow: run.flow, replayOf: run.id, after: run.startedAt, limit: REPLAYS_SHOWN }).catch(() => [])
    // A parked run (SPEC §22): how it waits, and its resume link for those who may run the flow.
    const waiting = run.status === 'waiting' ? await waitingFacts(store.waits, projectId, run.id, canRun).catch(() => null) : null
    return renderRunPage({ project, run, flow: project.flows.get(run.flow), canRun, replays, waiting })
  })
}

/** The Replay button (a plain form): replays, then shows the new run (303 See Other). `?from=failed`: the "Retry from failed node" button. */
export function replayFormHandler(context: AppContext) {
  return pageRoute(async (event) => {
    const { project } = await pageAccess(context, event, 'run')
    if (isCrossSite(event)) throw httpError('FORBIDDEN', ["A replay must be started from this server's own pages."])
    const projectId = project.settings.projectId
    const store = await context.workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    let outcome: RunOutcome
    try {
      const from = getQuery(event).from === 'failed' ? 'failed' : undefined
      const runId = getRouterParam(event, 'runId') ?? ''
      outcome = (await replayRun({ project, store, runId, trigger: 'http', signal: context.options.signal, from })).outcome
    } catch (error) {
      // A refusal says why (its message names only the run and flow); other errors keep their public lines.
      if (isReplayRefusal(error)) throw httpError(error.code, [error.message], { cause: error })
      throw error
    }
    if (outcome.kind === 'invalid') {
      const errors = capErrorList(outcome.errors).join('; ')
      throw httpError('INPUT_INVALID', [`The recorded input does not pass the flow's current input schemas: ${errors}`])
    }
    return new Response(null, { status: 303, headers: { location: `/runs/${encodeURIComponent(projectId)}/${encodeURIComponent(outcome.runId)}` } })
  })
}
