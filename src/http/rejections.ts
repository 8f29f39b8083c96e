// Requests rejected before a run (401, 400, 404, 405, 413, 415, 429, 503), counted by status per
// project for /status. A route says once which project its refusals count for (`countRejections`);
// the `onError` of app.ts counts each FlowctlError it renders for such a request. Requests naming
// no known project go to one shared bucket; routes that never call it count nothing.
import type { H3Event } from 'h3'

const UNKNOWN_PROJECT = '(unknown project)'

const COUNTED_FOR = Symbol('flowctl.rejectionsCountedFor')

/**
 * Errors thrown from now on in this request are counted for `projectId` (null: the unknown bucket;
 * undefined: no longer counted).
 */
export function countRejections(event: H3Event, projectId: string | null | undefined): void {
  ;(event.context as Record<symbol, string | null | undefined>)[COUNTED_FOR] = projectId
}

/** The project a refusal of this request counts for; undefined when the route does not count. */
export function rejectionsCountedFor(event: H3Event): string | null | undefined {
  return (event.context as Record<symbol, string | null | undefined>)[COUNTED_FOR]
}

export class RejectionCounter {
  #counts = new Map<string, Map<number, number>>()

  /** `onCount`: each refusal also goes there (flowctl_rejections_total of /metrics). */
  constructor(private readonly onCount: (projectId: string, status: number) => void = () => {}) {}

  count(projectId: string | null, status: number): void {
    const key = projectId ?? UNKNOWN_PROJECT
    this.onCount(key, status)
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
