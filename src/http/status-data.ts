// The data behind /status and /api/status. Full details go to loopback clients (every project) and
// to signed-in users (their projects only); everyone else gets overall health and the heartbeat.
import { formatProblem } from '../errors.js'
import { runPath } from '../openapi/generate.js'
import type { Project } from '../model/project.js'
import { listSchedules, type ScheduleListing } from '../schedule/due-index.js'
import type { RunRecord, Store } from '../model/store.js'
import type { AppContext } from './context.js'
import { describeStoreError } from '../serve/workspace.js'
import { compareText } from '../internal/compare.js'

const HEARTBEAT_STALE_MS = 2 * 60_000
const RECENT_RUNS = 10

interface HeartbeatView {
  at: string | null
  stale: boolean
}

interface FlowView {
  slug: string
  name: string
  file: string
  /** Upper-case method and run path; null for flows without a Start node or with `http: false`. */
  method: string | null
  path: string | null
  /** Whether the flow has a Run API route: false with `http: false` (or without a Start node). */
  http: boolean
  /** Whether the flow has a Start node (with `http: false` it runs from schedules and `flowctl run`). */
  start: boolean
}

export interface ProjectStatus {
  projectId: string
  name: string
  ok: boolean
  /** Why `ok` is false, in words for the page (empty when ok). */
  reasons: string[]
  store: { kind: string | null; ok: boolean; error: string | null }
  heartbeat: HeartbeatView
  flows: FlowView[]
  problems: string[]
  rejected: Record<string, number>
  schedules: ScheduleListing[]
  recentRuns: RunRecord[]
  recentFailures: RunRecord[]
}

export interface StatusView {
  /** False when a project has load errors, a store is unreachable, or schedules exist and the heartbeat is stale. */
  ok: boolean
  /** Why `ok` is false (empty when ok); shown to every viewer, without project details. */
  reasons: string[]
  heartbeat: HeartbeatView
  /** Present only for a viewer allowed to see details. */
  projects?: ProjectStatus[]
  /** Rejected requests that named no known project (loopback viewers only). */
  rejectedUnknownProject?: Record<string, number>
}

/** Who is looking: every project (loopback), some projects (a signed-in user), or none. */
export type Viewer = { kind: 'all' } | { kind: 'projects'; projectIds: Set<string> } | { kind: 'public' }

export async function buildStatus(context: AppContext, viewer: Viewer, now: Date = new Date()): Promise<StatusView> {
  const entries = context.workspace.list()
  const heartbeats = await Promise.all(
    entries.map(async (entry) => {
      const projectId = entry.project.settings.projectId
      const store = await context.workspace.storeFor(projectId)
      return { projectId, store, heartbeat: store ? await heartbeatOf(store, projectId, now) : { at: null, stale: true } }
    }),
  )
  const latest =
    heartbeats
      .map((h) => h.heartbeat.at)
      .filter((at): at is string => at !== null)
      .sort()
      .at(-1) ?? null
  const reasons: string[] = []
  const count = (n: number, one: string, many: string) => (n === 1 ? one : `${n} ${many}`)
  const unreachable = heartbeats.filter((h) => h.store === null).length
  if (unreachable) reasons.push(`${count(unreachable, 'a store is', 'stores are')} unreachable`)
  const broken = entries.filter((entry) => hasLoadErrors(entry.project)).length
  if (broken) reasons.push(`${count(broken, 'a project has', 'projects have')} load errors`)
  const unticked = heartbeats.filter((h, i) => h.heartbeat.stale && hasSchedules(entries[i]!.project)).length
  if (unticked) reasons.push(`the scheduler heartbeat is stale while schedules exist (${count(unticked, 'one project', 'projects')})`)
  const view: StatusView = { ok: reasons.length === 0, reasons, heartbeat: heartbeatView(latest, now) }
  if (viewer.kind === 'public') return view

  const visible = heartbeats.filter((h) => viewer.kind === 'all' || viewer.projectIds.has(h.projectId))
  view.projects = await Promise.all(
    visible.map(async ({ projectId, store, heartbeat }) => {
      const entry = context.workspace.get(projectId)!
      return projectStatus(context, entry.project, store, entry.storeError, heartbeat, now)
    }),
  )
  if (viewer.kind === 'all') view.rejectedUnknownProject = context.rejections.forProject(null)
  return view
}

async function projectStatus(
  context: AppContext,
  project: Project,
  store: Store | null,
  storeError: string | null,
  heartbeat: HeartbeatView,
  now: Date,
): Promise<ProjectStatus> {
  const projectId = project.settings.projectId
  let recentRuns: RunRecord[] = []
  let recentFailures: RunRecord[] = []
  let error = store ? null : storeError
  if (store) {
    try {
      ;[recentRuns, recentFailures] = await Promise.all([
        store.history.listRuns({ projectId, limit: RECENT_RUNS }),
        store.history.listRuns({ projectId, status: 'error', limit: RECENT_RUNS }),
      ])
    } catch (failure) {
      error = describeStoreError(failure, project)
    }
  }
  const flows: FlowView[] = [...project.flows.values()]
    .map((flow) => ({
      slug: flow.slug,
      name: flow.name,
      file: flow.file,
      method: flow.start?.http ? flow.start.method.toUpperCase() : null,
      path: flow.start?.http ? runPath(projectId, flow, flow.start) : null,
      http: flow.start?.http === true,
      start: flow.start !== null && flow.start !== undefined,
    }))
    .sort((a, b) => compareText(a.slug, b.slug))
  const problems = project.problems.map(formatProblem)
  const reasons: string[] = []
  if (error !== null) reasons.push('the store is unreachable')
  if (hasLoadErrors(project)) reasons.push('flow files have load errors (see Load problems)')
  if (heartbeat.stale && hasSchedules(project))
    reasons.push('schedules exist but the scheduler heartbeat is stale: nothing is ticking (serve --cron, flowctl tick or POST /api/cron/tick)')
  return {
    projectId,
    name: project.settings.name,
    ok: reasons.length === 0,
    reasons,
    store: { kind: store?.kind ?? null, ok: error === null, error },
    heartbeat,
    flows,
    problems,
    rejected: context.rejections.forProject(projectId),
    schedules: listSchedules(project, now),
    recentRuns,
    recentFailures,
  }
}

function hasLoadErrors(project: Project): boolean {
  return project.problems.some((p) => p.severity === 'error')
}

function hasSchedules(project: Project): boolean {
  for (const flow of project.flows.values()) if (flow.schedule?.enabled) return true
  return false
}

async function heartbeatOf(store: Store, projectId: string, now: Date): Promise<HeartbeatView> {
  try {
    const heartbeat = await store.schedules.getHeartbeat(projectId)
    return heartbeatView(heartbeat?.at ?? null, now)
  } catch {
    return { at: null, stale: true }
  }
}

function heartbeatView(at: string | null, now: Date): HeartbeatView {
  if (at === null) return { at: null, stale: true }
  const time = Date.parse(at)
  return { at, stale: Number.isNaN(time) || now.getTime() - time > HEARTBEAT_STALE_MS }
}
