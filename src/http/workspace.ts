// The live projects of a serve process and their stores. Every entry is an immutable snapshot:
// a request takes the snapshot once and finishes on it, while a reload swaps in a new one.
// A store that failed to open (PostgreSQL down) leaves the project served with `storeError` set;
// later requests retry opening it, at most once every `retryMs`.
import type { Project } from '../model/project.js'
import { maskSecrets } from '../language/secrets.js'
import { DueIndex } from '../schedule/due-index.js'
import { documentIndexesOf } from '../store/index.js'
import type { Store } from '../model/store.js'
import { EventHub, publishingStore } from './events.js'

export interface WorkspaceEntry {
  readonly project: Project
  readonly store: Store | null
  /** Why the store is not open (secrets and URL credentials masked), or null. */
  readonly storeError: string | null
}

export type StoreOpener = (project: Project) => Promise<Store>

export interface WorkspaceOptions {
  /** Minimum time between two attempts to open a failed store (default 5 s). */
  retryMs?: number
  /** A store that takes longer than this to open counts as failed (default 10 s). */
  openTimeoutMs?: number
  now?: () => number
}

export class Workspace {
  #entries = new Map<string, WorkspaceEntry>()
  #lastAttempt = new Map<string, number>()
  #opening = new Map<string, Promise<Store | null>>()
  #closed = false
  readonly #open: StoreOpener
  readonly #retryMs: number
  readonly #openTimeoutMs: number
  readonly #now: () => number
  /** The schedules of every project, for the tick; only a reloaded project is re-indexed. */
  readonly dueIndex = new DueIndex()
  /** Runs, reloads and ticks, for `/api/events` and the serve log. */
  readonly events = new EventHub()

  constructor(openStore: StoreOpener, options: WorkspaceOptions = {}) {
    this.#open = openStore
    this.#retryMs = options.retryMs ?? 5_000
    this.#openTimeoutMs = options.openTimeoutMs ?? 10_000
    this.#now = options.now ?? Date.now
  }

  /** Adds a loaded project and tries to open its store (a failure is recorded, not thrown). */
  async add(project: Project): Promise<WorkspaceEntry> {
    const id = project.settings.projectId
    if (this.#entries.has(id)) throw new Error(`two projects use the projectId "${id}"`)
    this.#entries.set(id, { project, store: null, storeError: 'store not opened yet' })
    this.dueIndex.updateProject(project)
    await this.#tryOpen(id)
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
      previous.store.ensureIndexes(documentIndexesOf(project)).catch(() => {})
    }
    if (newId !== oldId) this.dueIndex.removeProject(oldId)
    this.dueIndex.updateProject(project)
  }

  /** The project's open store; retries opening a failed one when the retry interval has passed. */
  async storeFor(projectId: string): Promise<Store | null> {
    const entry = this.#entries.get(projectId)
    if (!entry) return null
    if (entry.store) return entry.store
    const last = this.#lastAttempt.get(projectId) ?? 0
    if (this.#now() - last < this.#retryMs && !this.#opening.has(projectId)) return null
    return this.#tryOpen(projectId)
  }

  #tryOpen(projectId: string): Promise<Store | null> {
    const pending = this.#opening.get(projectId)
    if (pending) return pending
    const attempt = this.#openOnce(projectId).finally(() => this.#opening.delete(projectId))
    this.#opening.set(projectId, attempt)
    return attempt
  }

  async #openOnce(projectId: string): Promise<Store | null> {
    const entry = this.#entries.get(projectId)
    if (!entry) return null
    this.#lastAttempt.set(projectId, this.#now())
    const opening = this.#open(entry.project)
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`opening the store took longer than ${this.#openTimeoutMs} ms`)), this.#openTimeoutMs)
    })
    try {
      const store = publishingStore(await Promise.race([opening, timeout]), this.events)
      const current = this.#entries.get(projectId)
      if (this.#closed || !current) {
        await store.close().catch(() => {})
        return null
      }
      this.#entries.set(projectId, { ...current, store, storeError: null })
      return store
    } catch (error) {
      // A store that opens after its timeout is closed rather than leaked.
      opening.then((late) => late.close(), () => {}).catch(() => {})
      const current = this.#entries.get(projectId)
      if (current) this.#entries.set(projectId, { ...current, store: null, storeError: describeStoreError(error, current.project) })
      return null
    } finally {
      clearTimeout(timer)
    }
  }

  /** Closes every open store; the workspace serves nothing afterwards. */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.allSettled([...this.#opening.values()])
    await Promise.allSettled(this.list().map((entry) => entry.store?.close()))
    for (const [id, entry] of this.#entries) this.#entries.set(id, { ...entry, store: null, storeError: 'closed' })
  }
}

/** The error's message with secret values and URL passwords masked. */
export function describeStoreError(error: unknown, project: Project): string {
  const message = error instanceof Error ? error.message : String(error)
  return maskSecrets(message, project.secrets).replace(/(\w+:\/\/)[^@/\s]*@/g, '$1***@')
}
