// The listeners of `history.onRecorded` (events, metrics, `flowctl test`): one set per store, shared
// by its history and queue ports, told after each commit that held a record. A listener runs on the
// recorder's path, so it is called synchronously, in a loop over an array (no promise, no
// allocation per run), and one that throws is logged and skipped: the run is committed whatever it does.
import type { RecordedListener, RunDocument, RunRecord } from '../model/store.js'

const NO_DOCUMENTS: readonly RunDocument[] = []

export class RecordedListeners {
  #listeners: readonly RecordedListener[] = []

  constructor(private readonly log: (line: string) => void = (line) => void process.stderr.write(`${line}\n`)) {}

  add(listener: RecordedListener): () => void {
    // A new array on change: a notify under way keeps iterating the one it started with.
    this.#listeners = [...this.#listeners, listener]
    let subscribed = true
    return () => {
      const index = subscribed ? this.#listeners.indexOf(listener) : -1
      subscribed = false
      if (index >= 0) this.#listeners = [...this.#listeners.slice(0, index), ...this.#listeners.slice(index + 1)]
    }
  }

  notify(run: RunRecord, documents: readonly RunDocument[] | undefined): void {
    const listeners = this.#listeners
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i]!(run, documents ?? NO_DOCUMENTS)
      } catch (error) {
        this.log(`flowctl: a listener of recorded runs failed (run ${run.id} is recorded): ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }
}
