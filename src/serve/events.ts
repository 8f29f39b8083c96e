// What `GET /api/events` streams (SPEC §14): `run` as each run ends (the record without its trace),
// `reload` after a project reloads and `tick` after a scheduler tick. Subscribers are the SSE
// streams and the serve log; publishing with none costs a loop over an empty set.
import type { RunRecord, Store } from '../model/store.js'

export type ServerEvent =
  | { type: 'run'; projectId: string; data: RunRecord }
  | { type: 'reload'; projectId: string; data: { projectId: string; changed: string[]; summary: string[]; ok: boolean } }
  | { type: 'tick'; projectId: null; data: Record<string, unknown> }

export type EventListener = (event: ServerEvent) => void

export class EventHub {
  readonly #listeners = new Set<EventListener>()
  readonly #streams = new Set<() => void>()

  /** Registers how to end one open event stream; returns the function that forgets it. */
  addStream(end: () => void): () => void {
    this.#streams.add(end)
    return () => void this.#streams.delete(end)
  }

  /** Ends every open event stream (shutdown: an open dashboard must not hold it up). */
  endStreams(): void {
    for (const end of [...this.#streams]) end()
  }

  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  get size(): number {
    return this.#listeners.size
  }

  publish(event: ServerEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event)
      } catch {
        // One broken subscriber (a closed stream) never stops the others or the run.
      }
    }
  }
}

/**
 * The same store, except that each committed run is published. Every trigger of `serve` (the Run
 * API, replays, the run form, ticks) records through the workspace's store, so all of them show.
 */
export function publishingStore(store: Store, hub: EventHub): Store {
  const recordRun: Store['recordRun'] = async (run, cap, details, documents) => {
    await store.recordRun(run, cap, details, documents)
    if (hub.size > 0) hub.publish({ type: 'run', projectId: run.projectId, data: run })
  }
  const finishAsyncRun: Store['finishAsyncRun'] = async (run, cap, details, completion, documents) => {
    await store.finishAsyncRun(run, cap, details, completion, documents)
    if (hub.size > 0) hub.publish({ type: 'run', projectId: run.projectId, data: run })
  }
  const bound = new Map<PropertyKey, unknown>()
  return new Proxy(store, {
    get(target, property) {
      if (property === 'recordRun') return recordRun
      if (property === 'finishAsyncRun') return finishAsyncRun
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      let method = bound.get(property)
      if (!method) {
        method = (value as (...args: unknown[]) => unknown).bind(target)
        bound.set(property, method)
      }
      return method
    },
  })
}
