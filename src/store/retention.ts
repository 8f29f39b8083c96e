// How long both stores keep what only housekeeping reads: schedule claims and finished async runs.
// Each store runs the same policy in its own SQL, with the boundaries computed here.
import { ASYNC_RESULT_RETENTION_MS } from '../model/async-runs.js'

/** Claims older than this, relative to the minute being claimed, are pruned (they can no longer be re-ticked in practice). */
export const CLAIM_RETENTION_MS = 7 * 24 * 60 * 60 * 1000

/** The oldest claimed minute (ISO) kept when `minute` is claimed; older claims of that schedule are deleted with the claim. */
export function claimPruneBefore(minute: string): string {
  return new Date(new Date(minute).getTime() - CLAIM_RETENTION_MS).toISOString()
}

/** Finished async runs are pruned at most this often per store instance and project (by a claim). */
const ASYNC_PRUNE_EVERY_MS = 10 * 60 * 1000

/** When finished async runs are due for pruning, per project; `due` notes the prune it allows. */
export class AsyncPruneSchedule {
  private readonly last = new Map<string, number>()

  /** The finished-before boundary (ISO) when a prune is due now, else null. */
  due(projectId: string, now: number): string | null {
    if (now - (this.last.get(projectId) ?? 0) < ASYNC_PRUNE_EVERY_MS) return null
    this.last.set(projectId, now)
    return new Date(now - ASYNC_RESULT_RETENTION_MS).toISOString()
  }
}
