// The claim loop shared by the background runners of `serve` (async-runner.ts: queued async runs;
// wait-runner.ts: parked runs to resume). Per project: claim as many items as there are free slots
// (one claim at a time; a wake during a claim asks for another right after it), run each claimed
// item, and claim again when a full batch may have left more behind or when an item finishes. What
// an item is, how it is claimed and how it runs are the runner's; nothing here touches a store.

export interface ClaimPumpOptions<Item> {
  /** Items of the project that may run at once on this instance; 0 when it cannot claim now (no store). */
  concurrency(projectId: string): number
  /** Claims up to `limit` items of the project (one store query). */
  claim(projectId: string, limit: number): Promise<readonly Item[]>
  /** Runs one claimed item to its end; it handles (logs) its own failures and does not reject. */
  run(item: Item, projectId: string): Promise<void>
  /** A failed claim, told once per project until a claim works again (a store outage would repeat every poll). */
  claimFailed(projectId: string, message: string): void
}

interface ProjectPump {
  /** Items claimed here and not finished. */
  running: number
  /** A claim is under way. */
  pumping: boolean
  /** Claim again once the current claim is done. */
  again: boolean
  /** The message of the last failed claim, until one works. */
  lastError: string | null
}

export class ClaimPump<Item> {
  readonly #options: ClaimPumpOptions<Item>
  readonly #projects = new Map<string, ProjectPump>()
  readonly #running = new Set<Promise<void>>()
  #stopped = false

  constructor(options: ClaimPumpOptions<Item>) {
    this.#options = options
  }

  /** Claims work for the project now, if it has free slots (a poll, or work was just queued). */
  wake(projectId: string): void {
    if (!this.#stopped) void this.#pump(projectId)
  }

  /**
   * Stops claiming and waits up to `graceMs` for the items under way; then `onLate` (the runner stops
   * its items, which end as it decides) and a wait for all of them.
   */
  async stop(graceMs: number, onLate: () => void): Promise<void> {
    this.#stopped = true
    const settled = Promise.allSettled([...this.#running])
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)))
    if ((await Promise.race([settled, late])) === 'late') onLate()
    clearTimeout(timer)
    await Promise.allSettled([...this.#running])
  }

  #state(projectId: string): ProjectPump {
    let state = this.#projects.get(projectId)
    if (!state) this.#projects.set(projectId, (state = { running: 0, pumping: false, again: false, lastError: null }))
    return state
  }

  async #pump(projectId: string): Promise<void> {
    const state = this.#state(projectId)
    if (state.pumping) {
      state.again = true
      return
    }
    const limit = this.#options.concurrency(projectId) - state.running
    if (limit <= 0) return
    state.pumping = true
    state.again = false
    try {
      const claimed = await this.#options.claim(projectId, limit)
      state.lastError = null
      for (const item of claimed) this.#start(item, projectId, state)
      // A full batch may have left more behind.
      if (claimed.length === limit) state.again = true
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      if (state.lastError !== message) this.#options.claimFailed(projectId, message)
      state.lastError = message
    } finally {
      state.pumping = false
    }
    if (state.again && !this.#stopped) setImmediate(() => this.wake(projectId))
  }

  #start(item: Item, projectId: string, state: ProjectPump): void {
    state.running += 1
    const run = this.#options.run(item, projectId).finally(() => {
      state.running -= 1
      this.#running.delete(run)
      // A slot is free.
      this.wake(projectId)
    })
    this.#running.add(run)
  }
}
