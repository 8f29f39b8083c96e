// How long both stores keep what only housekeeping reads: finished async runs.
// Each store runs the same policy in its own SQL, with the boundaries computed here.
// Schedule claims are never pruned (SPEC §20 "a minute runs once, forever"): `tick --at`, catch-up
// and `backfill` can name any past minute, and a claim is the only proof that it ran. A claim is one
// small row per run that a schedule made, far smaller than the run's history record.
import { ASYNC_RESULT_RETENTION_MS } from '../model/async-runs.js'

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
