// One commit per run: the documents handle a run's nodes see as `context.store`. An insert gets its
// id at once (later nodes can use it) and joins the run's pending writes, which the engine hands to
// `recordRun` (or an async run's `finishAsyncRun`): they commit in the record's transaction, so a
// run's writes become visible together with its record. A node that reads or changes documents
// while writes are pending commits them first (`insertRunDocuments`, one more commit for that run
// only), so a run always sees its own writes. Sub-flows (`call`, `each`) share their run's handle.
import type { InsertIds } from '../model/run.js'
import type { RunDocument, Store } from '../model/store.js'
import { newDocumentId } from '../store/ids.js'

/** Store methods that read or change stored documents: pending inserts are committed before them. */
const READS = new Set<PropertyKey>(['getDocument', 'findDocuments', 'updateDocuments', 'deleteDocuments', 'listCollections'])

export class RunDocuments {
  /** Inserts not committed yet, in insertion order. */
  private pending: RunDocument[] = []
  /** The commits of pending inserts under way, one after another (each sub-flow may ask for one). */
  private flushing: Promise<void> | null = null
  private handle: Store | null = null
  /** Set once the record took the pending inserts: a node still going (a timed-out run's) writes on its own. */
  private ended = false

  constructor(
    private readonly store: Store,
    private readonly projectId: string,
    private readonly ids: InsertIds | undefined,
  ) {}

  /** The store as the run's nodes see it (made the first time a node asks). */
  view(): Store {
    return (this.handle ??= this.makeView())
  }

  /**
   * The inserts to commit with the record, once every commit under way has settled (one that failed
   * put its inserts back). Afterwards inserts are written on their own, as before one commit per run.
   */
  async take(): Promise<readonly RunDocument[]> {
    while (this.flushing) await this.flushing.catch(() => {})
    this.ended = true
    const taken = this.pending
    this.pending = []
    return taken
  }

  private insert(projectId: string, collection: string, document: unknown, givenId?: string): Promise<string> {
    if (this.ended || projectId !== this.projectId) return this.store.insertDocument(projectId, collection, document, givenId)
    const keepExisting = givenId === undefined && this.ids !== undefined && this.ids.keepExisting
    const id = givenId ?? this.ids?.next(collection) ?? newDocumentId()
    this.pending.push({ collection, id, document, keepExisting })
    return Promise.resolve(id)
  }

  /** Commits the pending inserts (after any commit under way); a failed commit keeps them pending for the record. */
  private flush(): Promise<void> {
    const previous = this.flushing
    const current = (async () => {
      if (previous) await previous.catch(() => {})
      const batch = this.pending
      if (batch.length === 0) return
      this.pending = []
      try {
        await this.store.insertRunDocuments(this.projectId, batch)
      } catch (error) {
        this.pending = [...batch, ...this.pending]
        throw error
      }
    })()
    this.flushing = current
    void current
      .finally(() => {
        if (this.flushing === current) this.flushing = null
      })
      .catch(() => {})
    return current
  }

  private makeView(): Store {
    const insert: Store['insertDocument'] = (...args) => this.insert(...args)
    const bound = new Map<PropertyKey, unknown>()
    return new Proxy(this.store, {
      get: (target, property) => {
        if (property === 'insertDocument') return insert
        const value: unknown = Reflect.get(target, property, target)
        if (typeof value !== 'function') return value
        let method = bound.get(property)
        if (!method) {
          const call = value as (...args: unknown[]) => unknown
          method = READS.has(property)
            ? async (...args: unknown[]) => {
                if (this.pending.length > 0 || this.flushing) await this.flush()
                return call.apply(target, args)
              }
            : call.bind(target)
          bound.set(property, method)
        }
        return method
      },
    })
  }
}
