// One scheduler tick (SPEC §5.3): run the schedules due this minute (each claimed, so it runs once
// per minute across every process sharing the store), then alerts, digests and outbox delivery,
// then the heartbeat. A failing flow or store never throws out of here; it shows in the summary.
import { FlowctlError } from '../errors.js'
import { runFlow } from '../flow/engine.js'
import type { Flow, Project } from '../project/model.js'
import { maskSecrets } from '../project/secrets.js'
import type { Store } from '../store/types.js'
import { floorToMinute } from './cron.js'
import { DueIndex } from './due-index.js'
import { checkAlert, checkDigest, deliverOutbox, type NotifyOptions } from './notify.js'

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
}

export interface TickTarget {
  project: Project
  store: Store
}

export interface TickOptions {
  targets: TickTarget[]
  /** The time the tick is for (`flowctl tick --at`); floored to the minute for matching and claims. */
  at: Date
  /** Schedule runs in flight at once. */
  concurrency?: number
  /** A long-lived index (serve); without one an index is built for this tick (O(schedules)). */
  index?: DueIndex
  /** Wall clock for the heartbeat and outbox leases; injectable for tests. */
  clock?: () => Date
  /** Where problems are reported (default: standard error). */
  log?: (line: string) => void
}

type Counts = Omit<TickSummary, 'at'>

function emptyCounts(): Counts {
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

interface Job {
  target: TickTarget
  flow: Flow
  counts: Counts
}

export async function runTick(options: TickOptions): Promise<TickSummary> {
  const { targets, at } = options
  const clock = options.clock ?? (() => new Date())
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const minute = floorToMinute(at)
  const index = options.index ?? DueIndex.fromProjects(targets.map((t) => t.project))

  // Runs see the tick's time as their clock (so `--at` runs are dated then), advancing in real time.
  const startedWall = clock().getTime()
  const runClock = () => new Date(at.getTime() + (clock().getTime() - startedWall))

  const countsByTarget = new Map(targets.map((target) => [target, emptyCounts()]))
  const targetById = new Map(targets.map((target) => [target.project.settings.projectId, target]))
  const jobs: Job[] = []
  for (const due of index.due(minute)) {
    const target = targetById.get(due.project.settings.projectId)
    // The target's project is the live one; the index may hold an older copy of the flow.
    const flow = target?.project.flows.get(due.flow.slug)
    if (target && flow?.schedule?.enabled) jobs.push({ target, flow, counts: countsByTarget.get(target) as Counts })
  }

  await inParallel(jobs, Math.max(1, options.concurrency ?? 4), (job) => runSchedule(job, minute, runClock, log))

  await Promise.all(
    targets.map(async (target) => {
      const counts = countsByTarget.get(target) as Counts
      await notifyProject({ project: target.project, store: target.store, minute, clock }, counts, log)
      try {
        await target.store.saveHeartbeat({
          projectId: target.project.settings.projectId,
          at: clock().toISOString(),
          summary: { ...counts, at: minute.toISOString() },
        })
      } catch (error) {
        counts.ok = false
        log(`flowctl tick: ${target.project.settings.projectId}: could not save the heartbeat: ${message(error, target.project)}`)
      }
    }),
  )

  const total = emptyCounts()
  for (const counts of countsByTarget.values()) addCounts(total, counts)
  return { ok: total.ok, at: minute.toISOString(), ran: total.ran, errors: total.errors, digestsChecked: total.digestsChecked, digestsSent: total.digestsSent, alertsChecked: total.alertsChecked, alertsSent: total.alertsSent }
}

async function runSchedule(job: Job, minute: Date, now: () => Date, log: (line: string) => void): Promise<void> {
  const { target, flow, counts } = job
  const { project, store } = target
  const projectId = project.settings.projectId
  let claimed: boolean
  try {
    claimed = await store.claimScheduleMinute(projectId, `flow:${flow.slug}`, minute.toISOString())
  } catch (error) {
    counts.ok = false
    log(`flowctl tick: ${projectId}/${flow.slug}: could not claim the schedule: ${message(error, project)}`)
    return
  }
  if (!claimed) return
  counts.ran += 1
  try {
    const outcome = await runFlow({ project, flow, store, trigger: 'cron', method: 'CRON', input: { body: flow.schedule?.input ?? {} }, now })
    if (outcome.kind === 'failed') counts.errors += 1
    if (outcome.kind === 'invalid') {
      // Not a run, so nothing is recorded; the loader normally rejects such input at load time.
      counts.errors += 1
      log(`flowctl tick: ${projectId}/${flow.slug}: schedule input is invalid: ${outcome.errors.join('; ')}`)
    }
  } catch (error) {
    // The engine records failures itself; a throw means the store broke, or the flow cannot run at
    // all (no Start node): only the former makes the tick not ok.
    counts.errors += 1
    if (!(error instanceof FlowctlError)) counts.ok = false
    log(`flowctl tick: ${projectId}/${flow.slug}: run could not complete: ${message(error, project)}`)
  }
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
