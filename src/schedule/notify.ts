// Alerts and digests (SPEC §8), built once per tick across every process sharing the store.
//
// Each rule has a cursor (an ISO time, `alert:<index>` / `digest:<index>`). A message is enqueued in
// the same transaction that moves the cursor (`advanceCursor` is a compare-and-set), so when two
// ticks race only the winner enqueues. Delivery is separate: messages are leased from the outbox,
// sent, and marked delivered; a failed send is freed and leased again on the next tick.
import type { AlertRule, DigestRule, Project } from '../model/project.js'
import { maskSecrets } from '../language/secrets.js'
import type { RunRecord, Store } from '../model/store.js'
import { deliver } from './channels.js'
import { cronMatches } from '../language/cron.js'
import { describeHttpFailure, failedHttpOf, type HttpFailure } from '../flow/failed-http.js'
import { compareText } from '../internal/compare.js'

/** Failures listed in one alert; the total is still counted. */
const MAX_FAILURES_LISTED = 20
/** Failures of an alert whose failed http call's answer body is quoted in its text (all are in `failures`). */
const ALERT_BODIES_SHOWN = 5
/** Latest runs listed in a digest. */
const MAX_LATEST_RUNS = 10
/** Longer than any webhook timeout, so a live sender keeps its lease. */
const LEASE_MS = 120_000

export interface NotifyOptions {
  project: Project
  store: Store
  /** The tick's minute. */
  minute: Date
  /** Wall clock, for outbox leases (shared with other processes). */
  clock: () => Date
}

/** The flows a rule covers: null for every flow (`*`). */
function ruleFlows(flows: string[]): string[] | null {
  return flows.includes('*') ? null : flows
}

/** Runs after `after` (newest first) of the given flows, merged across flows. */
async function runsOf(
  store: Store,
  projectId: string,
  flows: string[] | null,
  query: { status?: 'error'; after?: string; limit: number },
): Promise<RunRecord[]> {
  if (flows === null) return store.history.listRuns({ projectId, ...query })
  const lists = await Promise.all(flows.map((flow) => store.history.listRuns({ projectId, flow, ...query })))
  return lists
    .flat()
    .sort((a, b) => compareText(b.startedAt, a.startedAt))
    .slice(0, query.limit)
}

/**
 * One alert rule. Before its first check a rule has no cursor: it starts at the tick's minute, so
 * failures older than the first tick are never alerted (turning alerts on does not replay history).
 * Failures of this very tick (its scheduled runs start at or after the minute) are included.
 */
export async function checkAlert(options: NotifyOptions, rule: AlertRule, index: number): Promise<void> {
  const { project, store, minute } = options
  const projectId = project.settings.projectId
  const key = `alert:${index}`
  const stored = await store.schedules.getCursor(projectId, key)
  // The first check looks back to the start of the tick's minute (runs of this tick start there).
  const cursor = stored ?? new Date(minute.getTime() - 1).toISOString()
  const flows = ruleFlows(rule.flows)
  const failures = await runsOf(store, projectId, flows, { status: 'error', after: cursor, limit: MAX_FAILURES_LISTED })
  const newest = failures[0]
  if (!newest) {
    if (stored === null) await store.schedules.advanceCursor(projectId, key, null, cursor, null)
    return
  }
  const total = (await store.history.countRuns(projectId, flows, cursor)).error
  const calls = await failedHttpCalls(store, projectId, failures)
  const payload = alertPayload(project, failures, Math.max(total, failures.length), calls)
  await store.schedules.advanceCursor(projectId, key, stored, newest.startedAt, { channel: rule.channel, payload })
}

/**
 * The failed http call of each failure, read from its stored trace (SPEC §21); null where the run did
 * not fail on one or kept no trace. One read per listed failure, at most MAX_FAILURES_LISTED.
 */
async function failedHttpCalls(store: Store, projectId: string, failures: RunRecord[]): Promise<(HttpFailure | null)[]> {
  return Promise.all(
    failures.map(async (run) => {
      if (run.failedNodeId === null) return null
      const stored = await store.history.getRun(projectId, run.id)
      return stored ? (failedHttpOf(stored.trace, stored.failedNodeId)?.http ?? null) : null
    }),
  )
}

function alertPayload(project: Project, failures: RunRecord[], total: number, calls: (HttpFailure | null)[]): Record<string, unknown> {
  const { projectId, name } = project.settings
  const mask = (text: string | null) => (text === null ? null : maskSecrets(text, project.secrets))
  const listed = failures.map((run, index) => {
    const http = calls[index] ?? null
    return {
      flow: run.flow,
      runId: run.id,
      trigger: run.trigger,
      failedNodeId: run.failedNodeId,
      error: mask(run.error),
      startedAt: run.startedAt,
      http: http && { method: http.method, url: mask(http.url), status: http.status, body: mask(http.body) },
    }
  })
  const lines = listed.map((f, index) => {
    const line = `• ${f.flow} — run ${f.runId} failed${f.failedNodeId ? ` at node ${f.failedNodeId}` : ''}: ${f.error ?? 'unknown error'} (${f.startedAt}, ${f.trigger})`
    if (!f.http) return line
    const call = `\n  ${describeHttpFailure({ ...f.http, url: f.http.url ?? '' })}`
    // Bodies of the newest few only, so an alert of many failures stays a readable size.
    const body = f.http.body && index < ALERT_BODIES_SHOWN ? `\n  answer body (first 2 KiB): ${f.http.body}` : ''
    return line + call + body
  })
  if (total > listed.length) lines.push(`…and ${total - listed.length} more`)
  const text = `⚠️ ${name} (${projectId}): ${total} failed run${total === 1 ? '' : 's'}\n${lines.join('\n')}`
  return { kind: 'alert', projectId, text, total, failures: listed }
}

/**
 * One digest rule: due when its cron matches the tick's minute in its timezone. The minute is
 * claimed so only one tick builds it. It covers the runs after the previous digest's newest run
 * (the first digest covers all history) and moves the cursor to the newest run it saw.
 */
export async function checkDigest(options: NotifyOptions, rule: DigestRule, index: number): Promise<void> {
  const { project, store, minute } = options
  if (!cronMatches(rule.cron, rule.timezone, minute)) return
  const projectId = project.settings.projectId
  const key = `digest:${index}`
  if (!(await store.schedules.claimMinute(projectId, key, minute.toISOString()))) return
  const cursor = await store.schedules.getCursor(projectId, key)
  const flows = ruleFlows(rule.flows)
  const latest = await runsOf(store, projectId, flows, { ...(cursor === null ? {} : { after: cursor }), limit: MAX_LATEST_RUNS })
  const counts = await store.history.countRuns(projectId, flows, cursor)
  const next = latest[0]?.startedAt ?? cursor ?? minute.toISOString()
  const payload = digestPayload(project, rule, minute, cursor, counts, latest)
  await store.schedules.advanceCursor(projectId, key, cursor, next, { channel: rule.channel, payload })
}

function digestPayload(
  project: Project,
  rule: DigestRule,
  minute: Date,
  since: string | null,
  counts: { success: number; error: number },
  latest: RunRecord[],
): Record<string, unknown> {
  const { projectId, name } = project.settings
  const total = counts.success + counts.error
  const flowsLabel = rule.flows.includes('*') ? 'all flows' : rule.flows.join(', ')
  const lines = latest.map((run) =>
    `• ${run.flow} ${run.status === 'success' ? '✓' : '✗'} ${run.httpStatus ?? ''} ${run.startedAt} (run ${run.id})`.replace(/  +/g, ' '),
  )
  const text = [
    `📊 ${name} (${projectId}) digest for ${flowsLabel}${since ? ` since ${since}` : ''}: ${total} run${total === 1 ? '' : 's'}, ${counts.success} succeeded, ${counts.error} failed`,
    ...(lines.length > 0 ? ['Latest:', ...lines] : []),
  ].join('\n')
  const runs = latest.map((run) => ({
    flow: run.flow,
    runId: run.id,
    status: run.status,
    httpStatus: run.httpStatus,
    startedAt: run.startedAt,
    error: run.error === null ? null : maskSecrets(run.error, project.secrets),
  }))
  return { kind: 'digest', projectId, text, at: minute.toISOString(), since, flows: rule.flows, counts, latest: runs }
}

/** Leases and sends the project's pending messages; counts what was delivered, by kind. */
export async function deliverOutbox(options: NotifyOptions): Promise<{ alertsSent: number; digestsSent: number }> {
  const { project, store, clock } = options
  const sent = { alertsSent: 0, digestsSent: 0 }
  const messages = await store.schedules.leaseOutbox(project.settings.projectId, LEASE_MS, clock())
  for (const message of messages) {
    try {
      await deliver(project, message)
    } catch (error) {
      await store.schedules.markFailed(message.id, (error as Error).message)
      continue
    }
    await store.schedules.markDelivered(message.id)
    if (message.payload.kind === 'alert') sent.alertsSent += 1
    else if (message.payload.kind === 'digest') sent.digestsSent += 1
  }
  return sent
}
