// `limits.rateLimitScope: cluster` (SPEC §12): one budget of `runsPerMinutePerIp` per client IP and
// minute for every instance sharing the store. Asking the database on every request would put a
// round trip on every run, so each instance leases budget: one upsert adds a lease of N hits to the
// window's shared count and returns the total; the part that fits under the limit is served from
// memory. Leases double while they are used up within LEASE_FAST_MS, keep their size within
// LEASE_KEEP_MS and halve after, and never exceed an eighth of the remaining budget, so near the limit every hit is counted in the store before it is
// admitted. Nothing is admitted that was not counted first: the cluster never admits more than the
// limit. The price is under-admission: budget leased by an instance that then gets no more requests
// from that IP is lost for the minute (at most limit/8 per instance, see README).
// Clients are counted by group (an IPv4 address, an IPv6 /64: src/serve/client-group.ts). Memory
// stays bounded as in rate-limit.ts: past MAX_KEYS clients in a minute, the budgets first seen
// longest ago are dropped from memory (their counts stay in the store, which has a row per client),
// so however many addresses appear, a new client gets a budget of its own and is never refused
// because of the others (SPEC §18). A dropped client that comes back leases again and the store
// tells it its true count; all it loses is what it had leased and not used.
import type { Store } from '../model/store.js'
import type { GuardStore } from '../model/guard-types.js'
import type { RateDecision } from './rate-limit.js'
import { clientGroup } from '../serve/client-group.js'

const WINDOW_MS = 60_000
const MAX_KEYS = 100_000
/** Dropped at once when the table is full: one Map walk per 1,000 new clients, not per client. */
const EVICT_BATCH = 1_000
/** A lease used up faster than this asks for twice as much next time. */
const LEASE_FAST_MS = 100
/** A lease used up within this keeps its size; slower ones halve. */
const LEASE_KEEP_MS = 1_000
/** A lease never takes more than this share of the budget still free in the window. */
const LEASE_SHARE = 8
const ALLOWED: RateDecision = { allowed: true }

interface Budget {
  /** Hits this instance may still admit without asking the store. */
  granted: number
  /** The window's count across the cluster, as the last lease saw it. */
  count: number
  /** Size of the last lease, and when it was granted. */
  leaseSize: number
  leasedAt: number
  /** Requests waiting for a lease. */
  waiting: number
  inflight: Promise<void> | null
}

export class ClusterRateLimiter {
  #window = -1
  #budgets = new Map<string, Budget>()

  constructor(
    private readonly guards: GuardStore,
    private readonly now: () => number = Date.now,
    private readonly maxKeys: number = MAX_KEYS,
  ) {}

  /** Counts one request of `ip` against `limit` per minute across the cluster (0 = no limit). */
  hit(projectId: string, ip: string, limit: number): RateDecision | Promise<RateDecision> {
    if (limit <= 0) return ALLOWED
    const now = this.now()
    const window = Math.floor(now / WINDOW_MS)
    if (window !== this.#window) {
      this.#window = window
      this.#budgets.clear()
    }
    // The group has no NUL (PostgreSQL text cannot hold one); the key's NUL only separates.
    const counted = clientGroup(ip)
    const key = `${projectId}\u0000${counted}`
    let budget = this.#budgets.get(key)
    if (!budget) {
      if (this.#budgets.size >= this.maxKeys) this.#evictOldest()
      this.#budgets.set(key, (budget = { granted: 0, count: 0, leaseSize: 0, leasedAt: 0, waiting: 0, inflight: null }))
    }
    // The common case costs a map lookup: budget already leased.
    if (budget.granted > 0) {
      budget.granted--
      return ALLOWED
    }
    if (budget.count >= limit) return rejected(window, now)
    return this.#leaseAndHit(projectId, counted, budget, limit, window)
  }

  async #leaseAndHit(projectId: string, ip: string, budget: Budget, limit: number, window: number): Promise<RateDecision> {
    for (;;) {
      if (budget.granted > 0) {
        budget.granted--
        return ALLOWED
      }
      if (budget.count >= limit) return rejected(window, this.now())
      budget.waiting++
      try {
        budget.inflight ??= this.#lease(projectId, ip, budget, limit, window).finally(() => {
          budget.inflight = null
        })
        await budget.inflight
      } finally {
        budget.waiting--
      }
    }
  }

  async #lease(projectId: string, ip: string, budget: Budget, limit: number, window: number): Promise<void> {
    const now = this.now()
    const remaining = Math.max(1, limit - budget.count)
    // Used up fast: twice as much; within LEASE_KEEP_MS: the same; slower: half (a client slowing down).
    const lasted = now - budget.leasedAt
    const previous = budget.leaseSize
    const grow = previous === 0 ? 1 : lasted < LEASE_FAST_MS ? previous * 2 : lasted < LEASE_KEEP_MS ? previous : Math.floor(previous / 2)
    const size = Math.max(1, Math.min(Math.max(grow, budget.waiting), Math.floor(remaining / LEASE_SHARE)))
    const count = await this.guards.addRateHits(projectId, ip, window * WINDOW_MS, size)
    // The hits of this lease are the last `size` of `count`: those at or under the limit are ours.
    budget.granted += Math.max(0, Math.min(size, limit - (count - size)))
    budget.count = count
    budget.leaseSize = size
    budget.leasedAt = this.now()
  }

  /**
   * Drops the budgets first seen longest ago in this minute (a Map iterates in insertion order). A
   * request still waiting on a dropped budget's lease keeps its reference and finishes normally.
   */
  #evictOldest(): void {
    let left = Math.max(1, Math.min(EVICT_BATCH, Math.ceil(this.maxKeys / 100)))
    for (const key of this.#budgets.keys()) {
      this.#budgets.delete(key)
      if (--left === 0) break
    }
  }

  /** Number of tracked clients (for tests of the memory bound). */
  get size(): number {
    return this.#budgets.size
  }
}

function rejected(window: number, now: number): RateDecision {
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000)) }
}

/** One limiter per store: every project on that database shares its counts table. */
const limiters = new WeakMap<GuardStore, ClusterRateLimiter>()

/** The cluster decision for one request, or null when the store cannot be reached (the caller answers 503). */
export async function clusterRateDecision(store: Store | null, projectId: string, ip: string, limit: number): Promise<RateDecision | null> {
  if (limit <= 0) return ALLOWED
  if (!store) return null
  let limiter = limiters.get(store.guards)
  if (!limiter) limiters.set(store.guards, (limiter = new ClusterRateLimiter(store.guards)))
  try {
    return await limiter.hit(projectId, ip, limit)
  } catch {
    return null
  }
}
