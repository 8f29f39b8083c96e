// Fixed windows (one minute by default) per project and client IP over every run route; also the
// failed-secret throttle of the tick (short windows). Memory stays bounded:
// a new window drops every count of the previous one, keys are client groups (an IPv4 address, an
// IPv6 /64; anything else a client wrote shares one bucket), and past MAX_KEYS clients the oldest
// keys of the minute are evicted, so a flood of addresses never locks new clients out.
import { clientGroup } from '../serve/client-group.js'

const WINDOW_MS = 60_000
const MAX_KEYS = 100_000
/** Evicted at once when the table is full: one Map walk per 1,000 new clients, not per client. */
const EVICT_BATCH = 1_000

/** One key per project and client group (SPEC §18: an IPv6 client is its /64). */
function keyOf(projectId: string, ip: string): string {
  return `${projectId}\u0000${clientGroup(ip)}`
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number }

export class RateLimiter {
  #window = -1
  #counts = new Map<string, number>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxKeys: number = MAX_KEYS,
    private readonly windowMs: number = WINDOW_MS,
  ) {}

  /** Counts one request of `ip` against `limit` per window (0 = no limit). */
  hit(projectId: string, ip: string, limit: number): RateDecision {
    if (limit <= 0) return { allowed: true }
    const now = this.#enterWindow()
    const key = keyOf(projectId, ip)
    const previous = this.#counts.get(key)
    if (previous === undefined && this.#counts.size >= this.maxKeys) this.#evictOldest()
    const count = (previous ?? 0) + 1
    this.#counts.set(key, count)
    return count <= limit ? { allowed: true } : this.#refusal(now)
  }

  /** Whether `ip` has already used up `limit` in this window, without counting a request. */
  check(projectId: string, ip: string, limit: number): RateDecision {
    if (limit <= 0) return { allowed: true }
    const now = this.#enterWindow()
    return (this.#counts.get(keyOf(projectId, ip)) ?? 0) < limit ? { allowed: true } : this.#refusal(now)
  }

  #enterWindow(): number {
    const now = this.now()
    const window = Math.floor(now / this.windowMs)
    if (window !== this.#window) {
      this.#window = window
      this.#counts.clear()
    }
    return now
  }

  #refusal(now: number): RateDecision {
    const windowEnd = (this.#window + 1) * this.windowMs
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
