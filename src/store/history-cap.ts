// The history cap, one algorithm for both stores (each gives only its dialect's SQL, `TrimSql`).
//
// When: counting the project's runs on every insert would make the Run API's hot path pay for a
// COUNT; instead each store instance keeps a count per project (read from the database once, then
// incremented per committed run) and trims only when that count passes `cap + slack`. Slack is 1% of
// the cap, at most 100 rows, so a 10,000-run history is trimmed once per ~100 inserts and never holds
// more than ~1% extra per writing process. Other instances' inserts are not seen by this count, but
// each instance trims against the real rows, so the bound holds per instance.
//
// How: the caller whose run passed the count waits for a trim that finds the boundary (the cap-th
// newest run by the ordering key: startedAt, then insertion order) and deletes the project's runs
// below it, but for runs still `waiting` (parked, SPEC §22: a parked run is never lost; its first park
// is counted here like a recorded run, and its final record replaces the waiting one). The trim follows the run's insert: in the same transaction (SQLite's group commit) or in
// one of its own after it (PostgreSQL). Rows inserted meanwhile are newer than the boundary, so a
// trim never touches them; they still count afterwards.
//
// Trims never overlap within an instance: TrimQueue runs one per project at a time (two concurrent
// DELETEs of the same rows is what deadlocked PostgreSQL); across instances that is the dialect's
// business (PostgreSQL's advisory lock, SQLite's write lock). A trim is housekeeping: the run it
// follows is already committed, so a failed or skipped trim never fails recordRun; it is retried.

/** A trim skipped (another instance was trimming) or failed is tried again this much later. */
const TRIM_RETRY_MS = 100

/** How far past the cap history may grow before it is trimmed. */
function historySlack(cap: number): number {
  return Math.min(100, Math.floor(cap / 100))
}

/** A cap below 1 (or not finite) means history is not trimmed. */
function isCapped(cap: number): boolean {
  return Number.isFinite(cap) && cap >= 1
}

/** What a store's dialect does for the cap. */
export interface TrimSql {
  /** How many runs the project holds (read once per project by each instance). */
  countRuns(projectId: string): Promise<number>
  /**
   * Deletes the project's runs older than its `keep`-th newest (the boundary), nothing when it holds
   * fewer, and never a run still `waiting` (a parked run's record, replaced when it finishes: the
   * project may hold those beyond the cap). Resolves false when it did not run because another
   * instance is trimming the project.
   */
  deleteBelowBoundary(projectId: string, keep: number): Promise<boolean>
}

/** The cap of one store instance: its counts, its trims and their retries. */
export class HistoryCap {
  private readonly counts = new Map<string, number>()
  private readonly countReads = new Map<string, Promise<void>>()
  private readonly trims = new TrimQueue()
  private readonly retries = new Map<string, NodeJS.Timeout>()
  private closed = false

  constructor(private readonly sql: TrimSql) {}

  /**
   * Notes one run of the project; when the count passed `cap + slack`, gives the trim to wait for
   * (undefined otherwise: the common case costs no promise). Called once the run committed
   * (PostgreSQL), or once it is queued for a commit that the trim then joins after it (SQLite's group
   * commit: the trim costs no commit of its own). The promise never rejects: the run is committed, or
   * failed on its own, whatever happens here.
   */
  noteRun(projectId: string, cap: number): Promise<void> | undefined {
    if (!isCapped(cap)) return undefined
    const count = this.counts.get(projectId)
    if (count === undefined) return this.noteFirstRun(projectId, cap)
    this.counts.set(projectId, count + 1)
    return this.isDue(projectId, cap) ? this.trims.request(projectId, () => this.trim(projectId, cap)) : undefined
  }

  /** Waits for the trims under way and stops retrying (before the store closes). */
  async close(): Promise<void> {
    this.closed = true
    for (const timer of this.retries.values()) clearTimeout(timer)
    this.retries.clear()
    await this.trims.idle()
  }

  private isDue(projectId: string, cap: number): boolean {
    const count = this.counts.get(projectId)
    return count !== undefined && count > Math.floor(cap) + historySlack(cap)
  }

  /**
   * Reads the project's count once, however many runs are waiting for it, then notes the run. This
   * may count a run twice (it was committed before the read): an early trim, never a late one.
   */
  private async noteFirstRun(projectId: string, cap: number): Promise<void> {
    let read = this.countReads.get(projectId)
    if (!read) {
      read = this.sql
        .countRuns(projectId)
        .then((count) => void this.counts.set(projectId, count))
        .finally(() => this.countReads.delete(projectId))
      this.countReads.set(projectId, read)
    }
    try {
      await read
    } catch {
      return // the count is read again with the next run
    }
    await this.noteRun(projectId, cap)
  }

  private async trim(projectId: string, cap: number): Promise<void> {
    const atStart = this.counts.get(projectId)
    // A trim queued behind another may find the count already back under the cap.
    if (atStart === undefined || !this.isDue(projectId, cap)) return
    try {
      if (await this.sql.deleteBelowBoundary(projectId, Math.floor(cap))) {
        // The project was left at `cap` runs; runs noted since the trim started may not have been
        // seen by it, so they still count.
        const since = Math.max(0, (this.counts.get(projectId) ?? atStart) - atStart)
        this.counts.set(projectId, Math.floor(cap) + since)
        return
      }
    } catch {
      // The run is committed; a trim is housekeeping. Nothing is logged (errors may quote values).
    }
    this.retry(projectId, cap)
  }

  /** Skipped (another instance was trimming) or failed: try again shortly, so the bound holds soon after. */
  private retry(projectId: string, cap: number): void {
    if (this.retries.has(projectId) || this.closed) return
    const timer = setTimeout(() => {
      this.retries.delete(projectId)
      if (this.isDue(projectId, cap)) void this.trims.request(projectId, () => this.trim(projectId, cap))
    }, TRIM_RETRY_MS)
    timer.unref()
    this.retries.set(projectId, timer)
  }
}

interface TrimState {
  running: Promise<void>
  queued: Promise<void> | null
}

/**
 * At most one trim per project at a time in this instance. A request while a trim runs is served by
 * one more trim right after it (all such requests share it), so a caller waits for at most two.
 * The returned promise never rejects: `trim` handles its own failures.
 */
class TrimQueue {
  private readonly states = new Map<string, TrimState>()

  request(projectId: string, trim: () => Promise<void>): Promise<void> {
    const state = this.states.get(projectId)
    if (!state) return this.start(projectId, trim)
    state.queued ??= state.running.then(() => this.start(projectId, trim))
    return state.queued
  }

  /** Resolves when no trim is running or queued. */
  async idle(): Promise<void> {
    while (this.states.size > 0) await Promise.all([...this.states.values()].map((s) => s.queued ?? s.running))
  }

  private start(projectId: string, trim: () => Promise<void>): Promise<void> {
    const running = trim().catch(() => {})
    const state: TrimState = { running, queued: null }
    this.states.set(projectId, state)
    void running.then(() => {
      if (this.states.get(projectId) === state && state.queued === null) this.states.delete(projectId)
    })
    return running
  }
}
