// Opening the stores of a serve process: one attempt at a time per project, bounded by a timeout
// (a store that opens after it is closed rather than leaked), and a failed store tried again at most
// once every `retryMs` (PostgreSQL down must not cost a connection attempt per request).
import type { Project } from '../model/project.js'
import type { Store } from '../model/store.js'

export type StoreOpener = (project: Project) => Promise<Store>

export interface StorePoolOptions {
  /** Minimum time between two attempts to open a failed store (default 5 s). */
  retryMs?: number
  /** A store that takes longer than this to open counts as failed (default 10 s). */
  openTimeoutMs?: number
  now?: () => number
}

export type OpenAttempt = { store: Store; error: null } | { store: null; error: unknown }

export class StorePool {
  readonly #open: StoreOpener
  readonly #retryMs: number
  readonly #openTimeoutMs: number
  readonly #now: () => number
  readonly #lastAttempt = new Map<string, number>()
  readonly #opening = new Map<string, Promise<OpenAttempt>>()
  #closed = false

  constructor(open: StoreOpener, options: StorePoolOptions = {}) {
    this.#open = open
    this.#retryMs = options.retryMs ?? 5_000
    this.#openTimeoutMs = options.openTimeoutMs ?? 10_000
    this.#now = options.now ?? Date.now
  }

  get closed(): boolean {
    return this.#closed
  }

  /** True when a new attempt may start (the retry interval has passed) or one is under way to join. */
  mayAttempt(projectId: string): boolean {
    if (this.#opening.has(projectId)) return true
    return this.#now() - (this.#lastAttempt.get(projectId) ?? 0) >= this.#retryMs
  }

  /** Opens the project's store, or joins the attempt already under way for `projectId`. Never throws. */
  attempt(projectId: string, project: Project): Promise<OpenAttempt> {
    const pending = this.#opening.get(projectId)
    if (pending) return pending
    const attempt = this.#openOnce(projectId, project).finally(() => this.#opening.delete(projectId))
    this.#opening.set(projectId, attempt)
    return attempt
  }

  async #openOnce(projectId: string, project: Project): Promise<OpenAttempt> {
    this.#lastAttempt.set(projectId, this.#now())
    const opening = this.#open(project)
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`opening the store took longer than ${this.#openTimeoutMs} ms`)), this.#openTimeoutMs)
    })
    try {
      const store = await Promise.race([opening, timeout])
      if (this.#closed) {
        await store.close().catch(() => {})
        return { store: null, error: new Error('closed') }
      }
      return { store, error: null }
    } catch (error) {
      // A store that opens after its timeout is closed rather than leaked.
      opening
        .then(
          (late) => late.close(),
          () => {},
        )
        .catch(() => {})
      return { store: null, error }
    } finally {
      clearTimeout(timer)
    }
  }

  /** No store opens any more; resolves once the attempts under way have ended (their stores closed). */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.allSettled([...this.#opening.values()])
  }
}
