// Requests rejected before a run (401, 400, 404, 405, 413, 415, 429, 503), counted by status per
// project for /status. Requests naming no known project go to one shared bucket.

export const UNKNOWN_PROJECT = '(unknown project)'

export class RejectionCounter {
  #counts = new Map<string, Map<number, number>>()

  count(projectId: string | null, status: number): void {
    const key = projectId ?? UNKNOWN_PROJECT
    let byStatus = this.#counts.get(key)
    if (!byStatus) {
      byStatus = new Map()
      this.#counts.set(key, byStatus)
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
  }

  /** `{ "401": 3, ... }` for one project (or the unknown bucket with null). */
  forProject(projectId: string | null): Record<string, number> {
    const byStatus = this.#counts.get(projectId ?? UNKNOWN_PROJECT)
    const out: Record<string, number> = {}
    for (const [status, n] of [...(byStatus ?? [])].sort((a, b) => a[0] - b[0])) out[String(status)] = n
    return out
  }
}
