// One scheduler tick (SPEC §5.3): run the schedules due this minute (each claimed, so it runs once
// per minute across every process sharing the store), then alerts, digests and outbox delivery,
// then the heartbeat. A failing flow or store never throws out of here; it shows in the summary.
import { FlowctlError } from '../errors.js'
import { acquireFlowSlot, type FlowSlot } from '../flow/concurrency.js'
import { concurrencyOf } from '../project/guard-settings.js'
import { newRunId, runFlow } from '../flow/engine.js'
import { mayPark, openParking } from '../flow/park.js'
import type { Flow, Project } from '../model/project.js'
import { maskSecrets } from '../language/secrets.js'
import type { Store } from '../model/store.js'
import { dueMinutesBetween, floorToMinute } from '../language/cron.js'
import { DueIndex } from './due-index.js'
import { checkAlert, checkDigest, deliverOutbox, type NotifyOptions } from './notify.js'
import { compareText } from '../internal/compare.js'

export interface TickSummary {
  ok: boolean
  /** The tick's minute, ISO 8601. */
  at: string
  /** Schedule runs started by this tick, failed ones included. */
  ran: number
  /** Schedule runs that failed (or whose input was rejected). */
  errors: number
  digestsChecked: number
  digestsSent: number
  alertsChecked: number
  alertsSent: number
  /** Added by SPEC §16 (the fields above are §5.3's): true when nothing was run or written. */
  dryRun: boolean
  /** The runs this tick started (or, in a dry run, would start), by project, flow and minute. */
  runs: TickRun[]
}

export interface TickRun {
  projectId: string
  flow: string
  /** The minute the run is for (ISO): the tick's minute, or a missed one for catch-up. */
  scheduledFor: string
  /** True when the minute was missed and is run by catch-up. */
  catchUp: boolean
  /** Null in a dry run, and when the run could not start (invalid input, store down). */
  runId: string | null
  /**
   * `already ran`: only listed by backfill, for a minute claimed before (a tick or an earlier backfill).
   * `waiting`: the run parked at a long wait (SPEC §22, history status `waiting`); it goes on later.
   */
  status: 'success' | 'error' | 'waiting' | 'would run' | 'already ran' | 'skipped'
}

export interface TickTarget {
  project: Project
  store: Store
}

export interface TickOptions {
  targets: TickTarget[]
  /** The time the tick is for (`flowctl tick --at`); floored to the minute for matching and claims. */
  at: Date
  /** Claim and run nothing, write nothing (no notifications, heartbeat or catch-up cursor): report only. */
  dryRun?: boolean
  /** Schedule runs in flight at once. */
  concurrency?: number
  /** A long-lived index (serve); without one an index is built for this tick (O(schedules)). */
  index?: DueIndex
  /** Wall clock for runs, the heartbeat and outbox leases; injectable for tests. */
  clock?: () => Date
  /** Where problems are reported (default: standard error). */
  log?: (line: string) => void
}

export type Counts = Omit<TickSummary, 'at' | 'dryRun' | 'runs'>

const MINUTE_MS = 60_000
/** The cursor (store `cursors` row) holding a project's previous tick minute, for catch-up. */
const PREVIOUS_TICK_CURSOR = 'tick:previous'

export function emptyCounts(): Counts {
  return { ok: true, ran: 0, errors: 0, digestsChecked: 0, digestsSent: 0, alertsChecked: 0, alertsSent: 0 }
}

function addCounts(total: Counts, part: Counts): void {
  total.ok &&= part.ok
  total.ran += part.ran
  total.errors += part.errors
  total.digestsChecked += part.digestsChecked
  total.digestsSent += part.digestsSent
  total.alertsChecked += part.alertsChecked
  total.alertsSent += part.alertsSent
}

/** One flow's minutes to run in this tick, oldest first (catch-up minutes, then maybe this one). */
export interface ScheduleJob {
  target: TickTarget
  flow: Flow
  minutes: { minute: Date; catchUp: boolean }[]
}

export interface RunContext {
  dryRun: boolean
  clock: () => Date
  log: (line: string) => void
  runs: TickRun[]
  counts: (target: TickTarget) => Counts
  /** List minutes that were claimed before as `already ran` (backfill) instead of leaving them out (ticks). */
  reportClaimed?: boolean
}

export async function runTick(options: TickOptions): Promise<TickSummary> {
  const { targets } = options
  const dryRun = options.dryRun === true
  const clock = options.clock ?? (() => new Date())
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const minute = floorToMinute(options.at)
  const index = options.index ?? DueIndex.fromProjects(targets.map((t) => t.project))

  const countsByTarget = new Map(targets.map((target) => [target, emptyCounts()]))
  const counts = (target: TickTarget) => countsByTarget.get(target) as Counts
  const targetById = new Map(targets.map((target) => [target.project.settings.projectId, target]))
  const jobs = new Map<string, ScheduleJob>()
  const jobFor = (target: TickTarget, flow: Flow) => {
    const key = `${target.project.settings.projectId}\u0000${flow.slug}`
    let job = jobs.get(key)
    if (!job) jobs.set(key, (job = { target, flow, minutes: [] }))
    return job
  }

  // Catch-up first, so each flow's minutes are in order: only after a gap since the project's
  // previous tick (a tick every minute never gets here), and only for schedules that ask for it.
  const previousByTarget = new Map<TickTarget, string | null>()
  await Promise.all(
    targets.map(async (target) => {
      let previous: string | null = null
      try {
        previous = await target.store.schedules.getCursor(target.project.settings.projectId, PREVIOUS_TICK_CURSOR)
      } catch (error) {
        counts(target).ok = false
        log(`flowctl tick: ${target.project.settings.projectId}: could not read the previous tick: ${message(error, target.project)}`)
      }
      previousByTarget.set(target, previous)
      for (const [flow, missed] of missedMinutes(target.project, previous, minute)) {
        jobFor(target, flow).minutes.push(...missed.map((m) => ({ minute: m, catchUp: true })))
      }
    }),
  )
  for (const due of index.due(minute)) {
    const target = targetById.get(due.project.settings.projectId)
    // The target's project is the live one; the index may hold an older copy of the flow.
    const flow = target?.project.flows.get(due.flow.slug)
    if (target && flow?.schedule?.enabled) jobFor(target, flow).minutes.push({ minute, catchUp: false })
  }

  const context: RunContext = { dryRun, clock, log, runs: [], counts }
  await inParallel([...jobs.values()], Math.max(1, options.concurrency ?? 4), async (job) => {
    for (const { minute: at, catchUp } of job.minutes) await runSchedule(job, at, catchUp, context)
  })

  if (!dryRun) {
    await Promise.all(
      targets.map(async (target) => {
        const projectCounts = counts(target)
        const projectId = target.project.settings.projectId
        await notifyProject({ project: target.project, store: target.store, minute, clock }, projectCounts, log)
        try {
          await target.store.schedules.saveHeartbeat({ projectId, at: clock().toISOString(), summary: { ...projectCounts, at: minute.toISOString() } })
          const previous = previousByTarget.get(target) ?? null
          // Forward only; losing the race to another tick of a later minute is fine (claims hold).
          if (previous === null || Date.parse(previous) < minute.getTime()) {
            await target.store.schedules.advanceCursor(projectId, PREVIOUS_TICK_CURSOR, previous, minute.toISOString(), null)
          }
        } catch (error) {
          projectCounts.ok = false
          log(`flowctl tick: ${projectId}: could not save the heartbeat: ${message(error, target.project)}`)
        }
      }),
    )
  }

  const total = emptyCounts()
  for (const part of countsByTarget.values()) addCounts(total, part)
  const runs = context.runs.sort((a, b) => compareText(a.projectId, b.projectId) || compareText(a.flow, b.flow) || compareText(a.scheduledFor, b.scheduledFor))
  return {
    ok: total.ok,
    at: minute.toISOString(),
    ran: total.ran,
    errors: total.errors,
    digestsChecked: total.digestsChecked,
    digestsSent: total.digestsSent,
    alertsChecked: total.alertsChecked,
    alertsSent: total.alertsSent,
    dryRun,
    runs,
  }
}

/** Per catch-up schedule of the project, the due minutes it missed since `previous` (see SPEC §16). */
function missedMinutes(project: Project, previous: string | null, minute: Date): [Flow, Date[]][] {
  if (previous === null) return [] // the first tick: nothing is known to be missed
  const after = Date.parse(previous)
  if (!(minute.getTime() - after > MINUTE_MS)) return []
  const missed: [Flow, Date[]][] = []
  for (const flow of project.flows.values()) {
    const schedule = flow.schedule
    if (!schedule?.enabled || schedule.catchUp === 'none') continue
    const from = Math.max(after + MINUTE_MS, minute.getTime() - schedule.catchUpMinutes * MINUTE_MS)
    const due = dueMinutesBetween(schedule.cron, schedule.timezone, new Date(from), new Date(minute.getTime() - MINUTE_MS))
    const picked = schedule.catchUp === 'latest' ? due.slice(-1) : due
    if (picked.length > 0) missed.push([flow, picked])
  }
  return missed
}

/** Claims and runs one schedule minute (or, dry, reports it unless already claimed). */
export async function runSchedule(job: Pick<ScheduleJob, 'target' | 'flow'>, minute: Date, catchUp: boolean, context: RunContext): Promise<void> {
  const { target, flow } = job
  const { project, store } = target
  const counts = context.counts(target)
  const projectId = project.settings.projectId
  const scheduleId = `flow:${flow.slug}`
  const scheduledFor = minute.toISOString()
  const report = (runId: string | null, status: TickRun['status']): void =>
    void context.runs.push({ projectId, flow: flow.slug, scheduledFor, catchUp, runId, status })
  let claimed: boolean
  try {
    claimed = context.dryRun
      ? (await store.schedules.claimedMinutes(projectId, scheduleId, scheduledFor, scheduledFor)).length === 0
      : await store.schedules.claimMinute(projectId, scheduleId, scheduledFor)
  } catch (error) {
    counts.ok = false
    context.log(`flowctl tick: ${projectId}/${flow.slug}: could not claim the schedule: ${message(error, project)}`)
    return
  }
  if (!claimed) {
    if (context.reportClaimed) report(null, 'already ran')
    return
  }
  if (context.dryRun) {
    report(null, 'would run')
    return
  }
  // Over the flow's concurrency limit a scheduled run does not wait: it is recorded as skipped (SPEC §12).
  const concurrency = flow.start ? concurrencyOf(flow.start) : null
  let slot: FlowSlot | null = null
  if (concurrency) {
    try {
      slot = await acquireFlowSlot(store, projectId, flow.slug, concurrency, project.settings.limits.runTimeoutMs, 0)
      if (!slot) {
        const runId = await recordSkipped(target, flow, scheduledFor, concurrency.limit, context.clock())
        report(runId, 'skipped')
        return
      }
    } catch (error) {
      counts.ok = false
      context.log(`flowctl tick: ${projectId}/${flow.slug}: could not take a concurrency slot: ${message(error, project)}`)
      return
    }
  }
  counts.ran += 1
  try {
    // Nobody waits for a scheduled run's answer, so it may park at a long wait (SPEC §22).
    const parking = mayPark(flow, project.flows) ? await openParking(store.waits, projectId) : undefined
    const outcome = await runFlow({
      ...(parking ? { parking } : {}),
      project,
      flow,
      store,
      trigger: 'cron',
      method: 'CRON',
      input: { body: flow.schedule?.input ?? {} },
      now: context.clock,
      scheduledFor,
    })
    if (outcome.kind === 'invalid') {
      // Not a run, so nothing is recorded; the loader normally rejects such input at load time.
      counts.errors += 1
      report(null, 'error')
      context.log(`flowctl tick: ${projectId}/${flow.slug}: schedule input is invalid: ${outcome.errors.join('; ')}`)
      return
    }
    if (outcome.kind === 'failed') counts.errors += 1
    // A parked run has not succeeded yet: its outcome is the 202 of a waiting run (engine.ts).
    report(outcome.runId, outcome.kind === 'failed' ? 'error' : outcome.record.status === 'waiting' ? 'waiting' : 'success')
  } catch (error) {
    // The engine records failures itself; a throw means the store broke, or the flow cannot run at
    // all (no Start node): only the former makes the tick not ok.
    counts.errors += 1
    report(null, 'error')
    if (!(error instanceof FlowctlError)) counts.ok = false
    context.log(`flowctl tick: ${projectId}/${flow.slug}: run could not complete: ${message(error, project)}`)
  } finally {
    await slot?.release()
  }
}

/** A history record for a scheduled run not started: `limit` runs of its flow were running. */
async function recordSkipped(target: TickTarget, flow: Flow, scheduledFor: string, limit: number, now: Date): Promise<string> {
  const { project, store } = target
  const id = newRunId(now.getTime())
  await store.history.recordRun(
    {
      id,
      projectId: project.settings.projectId,
      flow: flow.slug,
      trigger: 'cron',
      method: 'CRON',
      startedAt: now.toISOString(),
      durationMs: 0,
      status: 'skipped',
      httpStatus: null,
      ports: [],
      failedNodeId: null,
      error: `skipped: the flow's concurrency limit (${limit}) was reached`,
      scheduledFor,
      replayOf: null,
      resumedFrom: null,
    },
    project.settings.limits.historyRuns,
  )
  return id
}

async function notifyProject(options: NotifyOptions, counts: Counts, log: (line: string) => void): Promise<void> {
  const { project } = options
  const { alerts, digests } = project.settings.notify
  const attempt = async (what: string, work: () => Promise<void>) => {
    try {
      await work()
    } catch (error) {
      counts.ok = false
      log(`flowctl tick: ${project.settings.projectId}: ${what} failed: ${message(error, project)}`)
    }
  }
  for (const [i, rule] of alerts.entries()) {
    counts.alertsChecked += 1
    await attempt(`alert rule ${i + 1}`, () => checkAlert(options, rule, i))
  }
  for (const [i, rule] of digests.entries()) {
    counts.digestsChecked += 1
    await attempt(`digest rule ${i + 1}`, () => checkDigest(options, rule, i))
  }
  await attempt('notification delivery', async () => {
    const sent = await deliverOutbox(options)
    counts.alertsSent += sent.alertsSent
    counts.digestsSent += sent.digestsSent
  })
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T
      await work(item)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

/** An error's message with the project's secret values masked (store errors may quote a URL). */
function message(error: unknown, project: Project): string {
  return maskSecrets(error instanceof Error ? error.message : String(error), project.secrets)
}
