// Group commit. Writes queued during one event-loop turn are committed together at the end of the
// turn (setImmediate: after every I/O callback of this loop iteration, so the requests that arrived
// together share one commit; a microtask would flush once per request). Each caller's promise
// settles only after the commit that holds its write, so a resolved write is durable, and when that
// commit fails every caller in it gets the error.

/** What a commit reports: nothing (all written) or, per failed item index, that item's own error. */
export type CommitResult = Map<number, unknown> | undefined

interface Pending<T> {
  item: T
  resolve: () => void
  reject: (error: unknown) => void
}

export class WriteBatcher<T> {
  private queue: Pending<T>[] = []
  private scheduled = false
  private inFlight = 0
  private readonly settled = new Set<Promise<void>>()

  /**
   * `commit` writes every item in one transaction (or throws). `maxInFlight` bounds the commits
   * running at once (asynchronous databases); writes arriving meanwhile wait and join the next one.
   */
  constructor(
    private readonly commit: (items: T[]) => CommitResult | Promise<CommitResult>,
    private readonly maxInFlight = 1,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject })
      this.schedule()
    })
  }

  /** Commits whatever is queued now and waits for every commit under way (for close). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.settled.size > 0) {
      if (this.queue.length > 0 && this.inFlight < this.maxInFlight) this.flush()
      await Promise.all([...this.settled])
    }
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.flush()
    })
  }

  private flush(): void {
    if (this.queue.length === 0 || this.inFlight >= this.maxInFlight) return
    const batch = this.queue
    this.queue = []
    this.inFlight += 1
    const done = this.run(batch).finally(() => {
      this.inFlight -= 1
      this.settled.delete(done)
      // Writes that queued while this commit ran go in the next one.
      if (this.queue.length > 0) this.schedule()
    })
    this.settled.add(done)
  }

  private async run(batch: Pending<T>[]): Promise<void> {
    let result: Map<number, unknown> | undefined
    try {
      result = await this.commit(batch.map((p) => p.item))
    } catch (error) {
      for (const pending of batch) pending.reject(error)
      return
    }
    batch.forEach((pending, index) => {
      if (result?.has(index)) pending.reject(result.get(index))
      else pending.resolve()
    })
  }
}
