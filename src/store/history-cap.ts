// History cap bookkeeping shared by both stores. Counting the project's runs on every insert would
// make the Run API's hot path pay for a COUNT; instead each store instance keeps a count per project
// (read from the database once, then incremented per insert) and trims only when that count passes
// `cap + slack`. Slack is 1% of the cap, at most 100 rows, so a 10,000-run history is trimmed once
// per ~100 inserts and never holds more than ~1% extra per writing process. Other processes' inserts
// are not seen by this count, but each process trims against the real count, so the bound holds.

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

  /**
   * Notes one insert for the project and says whether history should be trimmed now.
   * `readCount` gives the real number of runs (used the first time a project is seen).
   */
  async noteInsert(projectId: string, cap: number, readCount: () => Promise<number> | number): Promise<boolean> {
    if (!isCapped(cap)) return false
    const known = this.counts.get(projectId)
    const count = known === undefined ? await readCount() : known + 1
    this.counts.set(projectId, count)
    return count > Math.floor(cap) + historySlack(cap)
  }

  /** After a trim the project holds at most `cap` runs. */
  trimmed(projectId: string, cap: number): void {
    this.counts.set(projectId, Math.floor(cap))
  }
}
