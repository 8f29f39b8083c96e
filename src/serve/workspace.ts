// The live projects of a serve process and their stores. Every entry is an immutable snapshot:
// a request takes the snapshot once and finishes on it, while a reload swaps in a new one.
// A store that failed to open (PostgreSQL down) leaves the project served with `storeError` set;
// later requests retry opening it through the store pool (store-pool.ts), at most once every `retryMs`.
import type { Project } from '../model/project.js'
import { maskSecrets } from '../language/secrets.js'
import { documentIndexesOf } from '../project/database.js'
import { DueIndex } from '../schedule/due-index.js'
import type { Store } from '../model/store.js'
import { EventHub, publishRecordedRuns } from './events.js'
import { StorePool, type StoreOpener, type StorePoolOptions } from './store-pool.js'
import { RunMetrics } from '../telemetry/metrics.js'

export type { StoreOpener } from './store-pool.js'

export interface WorkspaceEntry {
  readonly project: Project
  readonly store: Store | null
  /** Why the store is not open (secrets and URL credentials masked), or null. */
  readonly storeError: string | null
}

export type WorkspaceOptions = StorePoolOptions

export class Workspace {
  #entries = new Map<string, WorkspaceEntry>()
  readonly #stores: StorePool
  /** The schedules of every project, for the tick; only a reloaded project is re-indexed. */
  readonly dueIndex = new DueIndex()
  /** Runs, reloads and ticks, for `/api/events` and the serve log. */
  readonly events = new EventHub()
  /** Runs and refusals counted for `GET /metrics` (SPEC §23). */
  readonly metrics = new RunMetrics()

  constructor(openStore: StoreOpener, options: WorkspaceOptions = {}) {
    this.#stores = new StorePool(openStore, options)
  }

  /** Adds a loaded project and tries to open its store (a failure is recorded, not thrown). */
  async add(project: Project): Promise<WorkspaceEntry> {
    const id = project.settings.projectId
    if (this.#entries.has(id)) throw new Error(`two projects use the projectId "${id}"`)
    this.#entries.set(id, { project, store: null, storeError: 'store not opened yet' })
    this.dueIndex.updateProject(project)
    await this.#open(id)
    return this.#entries.get(id)!
  }

  get(projectId: string): WorkspaceEntry | undefined {
    return this.#entries.get(projectId)
  }

  list(): WorkspaceEntry[] {
    return [...this.#entries.values()]
  }

  /** Swaps in a reloaded project (matched by folder); in-flight requests keep their snapshot. */
  replace(project: Project): void {
    const previous = this.list().find((entry) => entry.project.dir === project.dir)
    if (!previous) throw new Error(`no project served from ${project.dir}`)
    const oldId = previous.project.settings.projectId
    const newId = project.settings.projectId
    // A changed projectId keeps the store and moves the entry; a clash with another project keeps the old id.
    if (newId !== oldId && this.#entries.has(newId)) return
    this.#entries.delete(oldId)
    this.#entries.set(newId, { ...previous, project })
    // Indexes added to flowctl.yaml are created in the background; a failure is retried on the next open.
    if (previous.store && JSON.stringify(previous.project.settings.indexes) !== JSON.stringify(project.settings.indexes)) {
      previous.store.documents.ensureIndexes(documentIndexesOf(project)).catch(() => {})
    }
    if (newId !== oldId) this.dueIndex.removeProject(oldId)
    this.dueIndex.updateProject(project)
  }

  /** The project's open store; retries opening a failed one when the retry interval has passed. */
  async storeFor(projectId: string): Promise<Store | null> {
    const entry = this.#entries.get(projectId)
    if (!entry) return null
    if (entry.store) return entry.store
    if (!this.#stores.mayAttempt(projectId)) return null
    return this.#open(projectId)
  }

  async #open(projectId: string): Promise<Store | null> {
    const entry = this.#entries.get(projectId)
    if (!entry) return null
    const { store, error } = await this.#stores.attempt(projectId, entry.project)
    const current = this.#entries.get(projectId)
    if (store) {
      // The attempt may be shared by several callers: the first one to get here records it.
      if (current?.store) return current.store
      if (!current || this.#stores.closed) {
        await store.close().catch(() => {})
        return null
      }
      publishRecordedRuns(store.history, this.events, (run) => this.metrics.recordRun(run))
      this.#entries.set(projectId, { ...current, store, storeError: null })
      return store
    }
    if (current && !this.#stores.closed) this.#entries.set(projectId, { ...current, store: null, storeError: describeStoreError(error, current.project) })
    return null
  }

  /** Closes every open store; the workspace serves nothing afterwards. */
  async close(): Promise<void> {
    await this.#stores.close()
    await Promise.allSettled(this.list().map((entry) => entry.store?.close()))
    for (const [id, entry] of this.#entries) this.#entries.set(id, { ...entry, store: null, storeError: 'closed' })
  }
}

/** The error's message with secret values and URL passwords masked. */
export function describeStoreError(error: unknown, project: Project): string {
  const message = error instanceof Error ? error.message : String(error)
  return maskSecrets(message, project.secrets).replace(/(\w+:\/\/)[^@/\s]*@/g, '$1***@')
}
