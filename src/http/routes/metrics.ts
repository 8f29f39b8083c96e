// `GET /metrics` (SPEC §23): the Prometheus text exposition format. Loopback callers (§17's rules) see
// every project; a signed-in user sees the projects they are a viewer of (or more); anyone else 401.
// Counters are kept as runs are recorded (telemetry/metrics.ts); gauges are read here, at scrape time.
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { Project } from '../../model/project.js'
import type { ProjectGauges } from '../../telemetry/metrics.js'
import { defaultMetricsText } from '../../telemetry/metrics.js'
import type { WorkspaceEntry } from '../../serve/workspace.js'
import { callerMay, callerOf } from '../access.js'
import { CHALLENGES } from '../authorization.js'
import type { AppContext } from '../context.js'

/** Prometheus' text format, version 0.0.4 (what prom-client answers too). */
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

export function metricsHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const caller = await callerOf(context, event)
    if (caller.kind === 'anonymous') throw httpError('AUTH_REQUIRED', undefined, { headers: { 'www-authenticate': CHALLENGES.bearer } })
    const entries = context.workspace.list().filter((entry) => callerMay(caller, entry.project.settings.projectId, 'read'))
    if (caller.kind === 'user' && entries.length === 0) throw httpError('FORBIDDEN')
    const shown = new Set(entries.map((entry) => entry.project.settings.projectId))
    // Refusals naming no known project are the loopback caller's only.
    const visible = caller.kind === 'loopback' ? () => true : (projectId: string) => shown.has(projectId)
    const gauges = await Promise.all(entries.map((entry) => gaugesOf(entry)))
    const text = context.workspace.metrics.familiesText(gauges, visible) + (await defaultMetricsText())
    return new Response(text, { status: 200, headers: { 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' } })
  }
}

async function gaugesOf(entry: WorkspaceEntry, now = Date.now()): Promise<ProjectGauges> {
  const { project, store } = entry
  const projectId = project.settings.projectId
  const gauges: ProjectGauges = { projectId, asyncQueueDepth: null, waitingRuns: null, scheduleLagSeconds: null, storeUp: false }
  if (!store) return gauges
  try {
    const [depth, waiting, heartbeat] = await Promise.all([
      store.queue.countQueued(projectId),
      store.waits.countWaiting(projectId),
      hasSchedules(project) ? store.schedules.getHeartbeat(projectId) : null,
    ])
    gauges.asyncQueueDepth = depth
    gauges.waitingRuns = waiting
    gauges.storeUp = true
    // Ticks are due once a minute: the lag is the time since the last one beyond that minute.
    if (heartbeat) gauges.scheduleLagSeconds = Math.max(0, (now - Date.parse(heartbeat.at)) / 1000 - 60)
  } catch {
    // The store did not answer: store_up 0, and no queue depth rather than a wrong one.
  }
  return gauges
}

function hasSchedules(project: Project): boolean {
  for (const flow of project.flows.values()) if (flow.schedule?.enabled) return true
  return false
}
