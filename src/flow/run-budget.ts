// What one run may spend, shared by the run and its sub-flows (SPEC §18): the event loop (the run
// gives it back every few milliseconds) and upstream http requests (`limits.httpCallsPerRun`).
import { RunBudgetSpent } from '../nodes/types.js'

/**
 * How long a run keeps the event loop before it yields (setImmediate). Time rather than a count of
 * steps: a step may cost 1 µs or 1 ms. 5 ms keeps other callers' waits far under SPEC §18's 100 ms
 * while a yield (~10 µs) costs under 1% of a busy run; a run that finishes in under 5 ms never yields.
 */
export const YIELD_EVERY_MS = 5

const HTTP_CALLS_EXCEEDED = 'http calls exceed limits.httpCallsPerRun'

export class RunBudget {
  #lastYield = performance.now()
  #yielding: Promise<void> | null = null
  #httpCalls = 0

  constructor(private readonly httpCallsPerRun: number) {}

  /**
   * A promise to await when the run has held the event loop for YIELD_EVERY_MS, else null (no
   * await, so a short run pays one clock read per step). Concurrent walks of the run (an `each`
   * with concurrency) share one pending yield: all of them park, so the loop really gets its turn.
   */
  pace(): Promise<void> | null {
    if (this.#yielding) return this.#yielding
    if (performance.now() - this.#lastYield < YIELD_EVERY_MS) return null
    this.#yielding = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.#yielding = null
      this.#lastYield = performance.now()
    })
    return this.#yielding
  }

  /** Counts one http request of the run (redirect hops included); throws past the limit. */
  takeHttpCall(): void {
    if (this.#httpCalls >= this.httpCallsPerRun) throw new RunBudgetSpent(HTTP_CALLS_EXCEEDED)
    this.#httpCalls++
  }

  get httpCalls(): number {
    return this.#httpCalls
  }
}
