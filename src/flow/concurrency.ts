// `concurrency: { limit, onLimit }` on a Start (SPEC §12), for the Run API and the scheduler: at
// most `limit` runs of a flow at once, across every process sharing the store. A run holds a slot
// row of the store (a lease), not a connection: waiting and running calls never exhaust the PostgreSQL pool, and a slot whose holder
// died frees itself when its lease ends (the run timeout plus a margin, since no run outlives it).
import type { ConcurrencySettings } from '../project/guard-settings.js'
import type { Store } from '../model/store.js'

/** How long after the run timeout a dead holder's slot stays taken. */
const LEASE_MARGIN_MS = 15_000
/** A queued call asks again after this long, doubling up to QUEUE_POLL_MAX_MS (and sooner when a local run ends). */
const QUEUE_POLL_MS = 10
const QUEUE_POLL_MAX_MS = 200

function slotLeaseMs(runTimeoutMs: number): number {
  return runTimeoutMs + LEASE_MARGIN_MS
}

export type { ConcurrencySettings }

export interface FlowSlot {
  /** Frees the slot (never throws: an unreachable store lets the lease expire instead). */
  release(): Promise<void>
}

/** Local callers waiting for a slot of a flow, woken when a run of this process ends. */
const localWaiters = new Map<string, Set<() => void>>()

/**
 * Takes a slot of the flow: at once (`reject`: null when all are taken), or waiting up to `waitMs`
 * for one (`queue`). Waiters poll the store, since a slot may free up in another instance; a run
 * ending in this process wakes its own waiters at once.
 */
export async function acquireFlowSlot(
  store: Store,
  projectId: string,
  flow: string,
  settings: ConcurrencySettings,
  runTimeoutMs: number,
  waitMs: number,
  signal?: AbortSignal,
): Promise<FlowSlot | null> {
  const lease = slotLeaseMs(runTimeoutMs)
  const localKey = `${projectId}\u0000${flow}`
  const take = async (): Promise<FlowSlot | null> => {
    const token = await store.guards.acquireFlowSlot(projectId, flow, settings.limit, lease)
    if (token === null) return null
    return {
      async release() {
        try {
          await store.guards.releaseFlowSlot(projectId, flow, token)
        } catch {
          // The lease ends by itself.
        }
        for (const wake of localWaiters.get(localKey) ?? []) wake()
      },
    }
  }
  const first = await take()
  if (first || settings.onLimit === 'reject' || waitMs <= 0) return first
  const deadline = Date.now() + waitMs
  let pause = QUEUE_POLL_MS
  for (;;) {
    const left = deadline - Date.now()
    if (left <= 0 || signal?.aborted) return null
    await sleepOrWake(localKey, Math.min(left, pause * (0.5 + Math.random())), signal)
    pause = Math.min(QUEUE_POLL_MAX_MS, pause * 2)
    const slot = await take()
    if (slot) return slot
  }
}

function sleepOrWake(key: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let waiters = localWaiters.get(key)
    if (!waiters) localWaiters.set(key, (waiters = new Set()))
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      waiters!.delete(done)
      if (waiters!.size === 0 && localWaiters.get(key) === waiters) localWaiters.delete(key)
      resolve()
    }
    const timer = setTimeout(done, ms)
    waiters.add(done)
    signal?.addEventListener('abort', done, { once: true })
  })
}
