// Times given to `tick --at` and `backfill --from/--to`, and how scheduled runs are printed.
import { FlowctlError } from '../errors.js'
import type { Output } from './output.js'

/**
 * How far ahead of the clock `tick --at` (and `backfill --to`) may reach without --dry-run. A tick
 * in the future would claim that minute before it comes, so the real tick would then skip it; one
 * minute allows for clocks that differ a little between machines.
 */
const FUTURE_MARGIN_MS = 60_000

/** An ISO 8601 time given to `flag`, or a usage error that shows what was given. */
export function parseIsoFlag(flag: string, value: string): Date {
  // Date.parse also takes "Nov 23" or "1"; ask for ISO 8601, with a date at least.
  const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(Number.NaN)
  if (Number.isNaN(at.getTime())) {
    throw new FlowctlError('USAGE', `${flag} expects an ISO 8601 time like 2026-11-23T10:00Z, got "${value}"`)
  }
  return at
}

/** A usage error when `at` is past the margin and this is not a dry run. */
export function refuseFuture(flag: string, at: Date, now: Date, dryRun: boolean): void {
  if (dryRun || at.getTime() - now.getTime() <= FUTURE_MARGIN_MS) return
  throw new FlowctlError(
    'USAGE',
    `${flag} ${at.toISOString()} is in the future; running schedules for a minute that has not come would claim it, and the real tick would then skip it (add --dry-run to see what would run)`,
  )
}

export interface PrintedRun {
  flow: string
  scheduledFor: string
  runId: string | null
  status: string
  catchUp?: boolean
  projectId?: string
}

/** One line per run: minute, flow, outcome (and run id); catch-up runs are marked. At most `limit` lines. */
export function printRuns(output: Output, runs: PrintedRun[], showProject: boolean, limit = Number.POSITIVE_INFINITY): void {
  const { color } = output
  for (const run of runs.slice(0, limit)) {
    const flow = showProject && run.projectId ? `${run.projectId}/${run.flow}` : run.flow
    const status = run.status === 'success' ? color.green(run.status) : run.status === 'error' ? color.red(run.status) : color.yellow(run.status)
    const extra = [run.runId, run.catchUp ? 'catch-up' : null].filter(Boolean).join(', ')
    output.line(`  ${run.scheduledFor.slice(0, 16)}Z  ${flow}  ${status}${extra ? color.dim(`  (${extra})`) : ''}`)
  }
  if (runs.length > limit) output.line(color.dim(`  … and ${runs.length - limit} more (--json lists them all)`))
}
