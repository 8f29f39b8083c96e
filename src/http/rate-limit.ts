// Fixed one-minute windows per project and client IP over every run route. Memory stays bounded:
// a new window drops every count of the previous one, keys are IP addresses (anything else a
// client wrote shares one bucket), and past MAX_KEYS clients the oldest keys of the minute are
// evicted, so a flood of addresses never locks new clients out.
import { isIP } from 'node:net'

const WINDOW_MS = 60_000
const MAX_KEYS = 100_000
/** Evicted at once when the table is full: one Map walk per 1,000 new clients, not per client. */
const EVICT_BATCH = 1_000
const NOT_AN_ADDRESS = 'not-an-address'

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number }

export class RateLimiter {
  #window = -1
  #counts = new Map<string, number>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxKeys: number = MAX_KEYS,
  ) {}

  /** Counts one request of `ip` against `limit` per minute (0 = no limit). */
  hit(projectId: string, ip: string, limit: number): RateDecision {
    if (limit <= 0) return { allowed: true }
    const now = this.now()
    const window = Math.floor(now / WINDOW_MS)
    if (window !== this.#window) {
      this.#window = window
      this.#counts.clear()
    }
    const key = `${projectId}\u0000${isIP(ip) === 0 ? NOT_AN_ADDRESS : ip}`
    const previous = this.#counts.get(key)
    if (previous === undefined && this.#counts.size >= this.maxKeys) this.#evictOldest()
    const count = (previous ?? 0) + 1
    this.#counts.set(key, count)
    if (count <= limit) return { allowed: true }
    const windowEnd = (window + 1) * WINDOW_MS
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)) }
  }

  /** Drops the keys first seen longest ago in this minute (a Map iterates in insertion order). */
  #evictOldest(): void {
    let left = Math.max(1, Math.min(EVICT_BATCH, Math.ceil(this.maxKeys / 100)))
    for (const key of this.#counts.keys()) {
      this.#counts.delete(key)
      if (--left === 0) break
    }
  }

  /** Number of tracked clients (for tests of the memory bound). */
  get size(): number {
    return this.#counts.size
  }
}
