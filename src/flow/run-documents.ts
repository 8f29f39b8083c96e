// One commit per run: the documents port a run's nodes see as `context.documents`. An insert gets its
// id at once (later nodes can use it) and joins the run's pending writes, which the engine hands to
// `history.recordRun` (or an async run's `queue.finish`): they commit in the record's transaction, so a
// run's writes become visible together with its record. A node that reads or changes documents
// while writes are pending commits them first (`insertRunDocuments`, one more commit for that run
// only), so a run always sees its own writes. Sub-flows (`call`, `each`) share their run's handle.
import type { FilterNode } from '../model/document-filter.js'
import type { InsertIds } from '../model/run.js'
import type { DocumentChange, DocumentIndexes, DocumentQuery, DocumentsPort, RunDocument } from '../model/store.js'
import { newDocumentId } from '../internal/ids.js'

/** The run's view of the documents port: inserts are buffered; reads and changes commit them first. */
export class RunDocuments implements DocumentsPort {
  /** Inserts not committed yet, in insertion order. */
  private pending: RunDocument[] = []
  /** The commits of pending inserts under way, one after another (each sub-flow may ask for one). */
  private flushing: Promise<void> | null = null
  /** Set once the record took the pending inserts: a node still going (a timed-out run's) writes on its own. */
  private ended = false

  constructor(
    private readonly documents: DocumentsPort,
    private readonly projectId: string,
    private readonly ids: InsertIds | undefined,
  ) {}

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

  insert(projectId: string, collection: string, document: unknown, givenId?: string): Promise<string> {
    if (this.ended || projectId !== this.projectId) return this.documents.insert(projectId, collection, document, givenId)
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
        await this.documents.insertRunDocuments(this.projectId, batch)
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

  insertRunDocuments(projectId: string, documents: readonly RunDocument[]): Promise<void> {
    return this.documents.insertRunDocuments(projectId, documents)
  }

  async get(projectId: string, collection: string, id: string): Promise<unknown | null> {
    if (this.pending.length > 0 || this.flushing) await this.flush()
    return this.documents.get(projectId, collection, id)
  }

  async find(projectId: string, collection: string, query: DocumentQuery): Promise<{ documents: unknown[]; count: number }> {
    if (this.pending.length > 0 || this.flushing) await this.flush()
    return this.documents.find(projectId, collection, query)
  }

  async update(projectId: string, collection: string, filter: FilterNode, change: DocumentChange): Promise<{ matched: number; modified: number }> {
    if (this.pending.length > 0 || this.flushing) await this.flush()
    return this.documents.update(projectId, collection, filter, change)
  }

  async delete(projectId: string, collection: string, filter: FilterNode): Promise<number> {
    if (this.pending.length > 0 || this.flushing) await this.flush()
    return this.documents.delete(projectId, collection, filter)
  }

  async listCollections(projectId: string): Promise<{ collection: string; count: number }[]> {
    if (this.pending.length > 0 || this.flushing) await this.flush()
    return this.documents.listCollections(projectId)
  }

  ensureIndexes(indexes: DocumentIndexes): Promise<void> {
    return this.documents.ensureIndexes(indexes)
  }
}
