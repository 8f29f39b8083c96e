// Tells a failed history write apart from any other error thrown out of runFlow: the store handed
// to the engine wraps `recordRun`, so a store outage becomes a 503 instead of a 500.
import type { Store } from '../model/store.js'

export class StoreWriteError extends Error {
  constructor(cause: unknown) {
    super('store unavailable', { cause })
    this.name = 'StoreWriteError'
  }
}

const guarded = new WeakMap<Store, Store>()

/** The same store, except that a throwing `recordRun` throws StoreWriteError. */
export function guardStore(store: Store): Store {
  let proxy = guarded.get(store)
  if (proxy) return proxy
  const recordRun: Store['recordRun'] = async (run, cap, details, documents) => {
    try {
      await store.recordRun(run, cap, details, documents)
    } catch (error) {
      throw new StoreWriteError(error)
    }
  }
  // Bound methods are kept, so a node's store call does not bind a new function every time.
  const bound = new Map<PropertyKey, { method: unknown; bound: unknown }>()
  proxy = new Proxy(store, {
    get(target, property) {
      if (property === 'recordRun') return recordRun
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      const known = bound.get(property)
      if (known && known.method === value) return known.bound
      const fresh = (value as (...args: unknown[]) => unknown).bind(target)
      bound.set(property, { method: value, bound: fresh })
      return fresh
    },
  })
  guarded.set(store, proxy)
  return proxy
}

/** True when `error` (or one of its causes) is a failed history write. */
export function isStoreWriteError(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof StoreWriteError) return true
    if ((e as { code?: unknown }).code === 'STORE_UNAVAILABLE') return true
  }
  return false
}
