// Fixed one-minute windows per project and client IP over every run route. Memory stays bounded:
// a new window drops every count of the previous one, and past MAX_KEYS clients share one bucket.

const WINDOW_MS = 60_000
const MAX_KEYS = 100_000
const OVERFLOW_KEY = '\u0000overflow'

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number }

export class RateLimiter {
  #window = -1
  #counts = new Map<string, number>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one request of `ip` against `limit` per minute (0 = no limit). */
  hit(projectId: string, ip: string, limit: number): RateDecision {
    if (limit <= 0) return { allowed: true }
    const now = this.now()
    const window = Math.floor(now / WINDOW_MS)
    if (window !== this.#window) {
      this.#window = window
      this.#counts.clear()
    }
    let key = `${projectId}\u0000${ip}`
    if (!this.#counts.has(key) && this.#counts.size >= MAX_KEYS) key = `${projectId}${OVERFLOW_KEY}`
    const count = (this.#counts.get(key) ?? 0) + 1
    this.#counts.set(key, count)
    if (count <= limit) return { allowed: true }
    const windowEnd = (window + 1) * WINDOW_MS
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)) }
  }

  /** Number of tracked clients (for tests of the memory bound). */
  get size(): number {
    return this.#counts.size
  }
}
