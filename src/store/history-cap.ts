// History cap bookkeeping shared by both stores. Counting the project's runs on every insert would
// make the Run API's hot path pay for a COUNT; instead each store instance keeps a count per project
// (read from the database once, then incremented per insert) and trims only when that count passes
// `cap + slack`. Slack is 1% of the cap, at most 100 rows, so a 10,000-run history is trimmed once
// per ~100 inserts and never holds more than ~1% extra per writing process. Other processes' inserts
// are not seen by this count, but each process trims against the real count, so the bound holds.
//
// Trims never overlap within a process: TrimQueue runs one per project at a time (two concurrent
// DELETEs of the same rows is what deadlocked PostgreSQL). A trim is housekeeping: the run it follows
// is already committed, so a failed or skipped trim never fails recordRun; it is simply retried.

/** How far past the cap history may grow before it is trimmed. */
export function historySlack(cap: number): number {
  return Math.min(100, Math.floor(cap / 100))
}

/** A cap below 1 (or not finite) means history is not trimmed. */
export function isCapped(cap: number): boolean {
  return Number.isFinite(cap) && cap >= 1
}

export class HistoryCounter {
  private readonly counts = new Map<string, number>()

  /** The count this instance believes the project holds, or undefined before it was read. */
  get(projectId: string): number | undefined {
    return this.counts.get(projectId)
  }

  /** Sets the count read from the database. */
  set(projectId: string, count: number): void {
    this.counts.set(projectId, count)
  }

  /** Notes `inserted` more runs (the count must be known) and gives the new count. */
  add(projectId: string, inserted: number): number {
    const count = (this.counts.get(projectId) ?? 0) + inserted
    this.counts.set(projectId, count)
    return count
  }

  /** True when the project's count has passed `cap + slack`. */
  isDue(projectId: string, cap: number): boolean {
    if (!isCapped(cap)) return false
    const count = this.counts.get(projectId)
    return count !== undefined && count > Math.floor(cap) + historySlack(cap)
  }

  /**
   * A trim that started when the count was `countAtStart` left the project at `cap` rows; runs
   * noted since then may not have been seen by it, so they still count.
   */
  trimmed(projectId: string, cap: number, countAtStart: number): void {
    const since = Math.max(0, (this.counts.get(projectId) ?? countAtStart) - countAtStart)
    this.counts.set(projectId, Math.floor(cap) + since)
  }

  forget(projectId: string): void {
    this.counts.delete(projectId)
  }
}

interface TrimState {
  running: Promise<void>
  queued: Promise<void> | null
}

/**
 * At most one trim per project at a time in this process. A request while a trim runs is served by
 * one more trim right after it (all such requests share it), so a caller waits for at most two.
 * The returned promise never rejects: `trim` handles its own failures.
 */
export class TrimQueue {
  private readonly states = new Map<string, TrimState>()

  request(projectId: string, trim: () => Promise<void>): Promise<void> {
    const state = this.states.get(projectId)
    if (!state) return this.start(projectId, trim)
    state.queued ??= state.running.then(() => this.start(projectId, trim))
    return state.queued
  }

  /** Resolves when no trim is running or queued (for close). */
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
