// `flowctl backfill` (SPEC §16): runs each due minute of a range once, oldest first, one at a time.
// Each minute is claimed like a tick claims it, so a minute that already ran (by a tick, catch-up or
// an earlier backfill) is listed as `already ran` and not run again. A disabled schedule is refused.
import { FlowctlError } from '../errors.js'
import type { Flow, Project } from '../model/project.js'
import type { Store } from '../model/store.js'
import { dueMinutesBetween, floorToMinute } from '../language/cron.js'
import { emptyCounts, runSchedule, type RunContext, type TickRun } from './tick.js'

/** More due minutes than this in one range is refused (a typo in --from would start years of runs). */
const MAX_BACKFILL_RUNS = 10_000

export interface BackfillOptions {
  project: Project
  store: Store
  flow: Flow
  /** Both ends included, floored to the minute. */
  from: Date
  to: Date
  dryRun?: boolean
  clock?: () => Date
  log?: (line: string) => void
}

export interface BackfillSummary {
  ok: boolean
  flow: string
  cron: string
  timezone: string
  from: string
  to: string
  dryRun: boolean
  /** Runs started (failed ones included). */
  ran: number
  errors: number
  /** Due minutes that had already run, and were not run again. */
  alreadyRan: number
  runs: TickRun[]
}

export async function runBackfill(options: BackfillOptions): Promise<BackfillSummary> {
  const { project, store, flow } = options
  const schedule = flow.schedule
  if (!schedule) throw new FlowctlError('USAGE', `flow "${flow.slug}" has no schedule; backfill runs the due minutes of a flow's schedule.cron`)
  // A disabled schedule is due at no minute (as a commented-out crontab line, or Kestra's disabled
  // trigger, whose backfill is refused): nothing to backfill until it is enabled again.
  if (!schedule.enabled) {
    throw new FlowctlError(
      'USAGE',
      `the schedule of flow "${flow.slug}" is disabled (schedule.enabled: false in ${flow.file}), so no minute was due; set enabled: true to backfill it, or run the flow once with flowctl run ${flow.slug}`,
    )
  }
  const from = floorToMinute(options.from)
  const to = floorToMinute(options.to)
  if (from.getTime() > to.getTime()) throw new FlowctlError('USAGE', `--from ${from.toISOString()} is after --to ${to.toISOString()}`)
  const minutes = dueMinutesBetween(schedule.cron, schedule.timezone, from, to, MAX_BACKFILL_RUNS + 1)
  if (minutes.length > MAX_BACKFILL_RUNS) {
    throw new FlowctlError(
      'USAGE',
      `"${schedule.cron}" is due more than ${MAX_BACKFILL_RUNS.toLocaleString('en')} times between --from and --to; backfill a shorter range at a time`,
    )
  }

  const counts = emptyCounts()
  const context: RunContext = {
    dryRun: options.dryRun === true,
    clock: options.clock ?? (() => new Date()),
    log: options.log ?? ((line: string) => process.stderr.write(`${line}\n`)),
    runs: [],
    counts: () => counts,
    reportClaimed: true,
  }
  const target = { project, store }
  for (const minute of minutes) await runSchedule({ target, flow }, minute, false, context)
  return {
    ok: counts.ok,
    flow: flow.slug,
    cron: schedule.cron,
    timezone: schedule.timezone,
    from: from.toISOString(),
    to: to.toISOString(),
    dryRun: context.dryRun,
    ran: counts.ran,
    errors: counts.errors,
    alreadyRan: context.runs.filter((run) => run.status === 'already ran').length,
    runs: context.runs,
  }
}
