// What `GET /api/events` streams (SPEC §14): `run` as each run ends (the record without its trace),
// `reload` after a project reloads and `tick` after a scheduler tick. Subscribers are the SSE
// streams and the serve log; publishing with none costs a loop over an empty set.
// Every event gets an id (SPEC §20); the hub keeps the last RESUMABLE_RUNS `run` events so that a
// client reconnecting with `Last-Event-ID` first gets the runs it missed (runsSince). It keeps them
// only once a stream has been opened: before that no client can hold an id of this process, and a
// server nobody watches does not hold a thousand records for nothing (they cost it garbage
// collection on every run: ~2% of the Run API's CPU).
import type { HistoryPort, RunRecord } from '../model/store.js'

export type ServerEvent =
  | { type: 'run'; projectId: string; data: RunRecord }
  | { type: 'reload'; projectId: string; data: { projectId: string; changed: string[]; summary: string[]; ok: boolean } }
  | { type: 'tick'; projectId: null; data: Record<string, unknown> }

/** An event as sent: with its id, `<process epoch>.<sequence>`. */
export type SentEvent = ServerEvent & { id: string }

export type EventListener = (event: SentEvent) => void

/** How many of the latest `run` events a reconnecting client can be sent (SPEC §20: at least 1,000). */
const RESUMABLE_RUNS = 1000

export class EventHub {
  readonly #listeners = new Set<EventListener>()
  readonly #streams = new Set<() => void>()
  /** Ids of another process (before a restart) are unknown here, whatever their sequence. */
  readonly #epoch = Date.now().toString(36)
  #sequence = 0
  /** The latest run events, oldest first: a ring of RESUMABLE_RUNS slots from #ringStart. */
  readonly #runs: SentEvent[] = []
  /** The sequence of each kept run event, in the ring's slots. */
  readonly #runSequences: number[] = []
  #ringStart = 0
  /** The sequence of the newest run event that was not kept, or left the ring (0: none). */
  #droppedUpTo = 0
  /** Whether run events are kept: from the first stream on. */
  #keeping = false

  /** Registers how to end one open event stream; returns the function that forgets it. */
  addStream(end: () => void): () => void {
    if (!this.#keeping) {
      this.#keeping = true
      this.#droppedUpTo = this.#sequence
    }
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

  /** The id of the latest event (a `reset` carries it, so the next reconnection resumes from there). */
  get lastId(): string {
    return `${this.#epoch}.${this.#sequence}`
  }

  publish(event: ServerEvent): void {
    const sequence = ++this.#sequence
    // A literal of one shape rather than a spread: the spread's added key cost ~4,000 instructions a run.
    const sent = { type: event.type, projectId: event.projectId, data: event.data, id: `${this.#epoch}.${sequence}` } as SentEvent
    if (sent.type === 'run' && this.#keeping) this.#keep(sent, sequence)
    for (const listener of this.#listeners) {
      try {
        listener(sent)
      } catch {
        // One broken subscriber (a closed stream) never stops the others or the run.
      }
    }
  }

  /**
   * The run events after the event `lastEventId`, oldest first; null when that id is unknown (another
   * process, malformed, ahead of this one) or too old (runs after it left the ring): then `reset`.
   */
  runsSince(lastEventId: string): SentEvent[] | null {
    const match = /^([0-9a-z]+)\.(\d{1,15})$/.exec(lastEventId)
    if (!match || match[1] !== this.#epoch) return null
    const sequence = Number(match[2])
    if (sequence > this.#sequence || sequence < this.#droppedUpTo) return null
    const after: SentEvent[] = []
    for (let i = 0; i < this.#runs.length; i++) {
      const slot = (this.#ringStart + i) % this.#runs.length
      if (this.#runSequences[slot]! > sequence) after.push(this.#runs[slot]!)
    }
    return after
  }

  #keep(run: SentEvent, sequence: number): void {
    if (this.#runs.length < RESUMABLE_RUNS) {
      this.#runs.push(run)
      this.#runSequences.push(sequence)
      return
    }
    this.#droppedUpTo = this.#runSequences[this.#ringStart]!
    this.#runs[this.#ringStart] = run
    this.#runSequences[this.#ringStart] = sequence
    this.#ringStart = (this.#ringStart + 1) % RESUMABLE_RUNS
  }
}

/**
 * Publishes each run the store commits (and counts it: `onRecorded`), from `history.onRecorded`.
 * Every trigger of `serve` (the Run API, async runs, replays, the run form, ticks) records through
 * the workspace's store, so all of them show. Returns the function that stops publishing.
 */
export function publishRecordedRuns(history: HistoryPort, hub: EventHub, onRecorded: (run: RunRecord) => void = () => {}): () => void {
  return history.onRecorded((run) => {
    onRecorded(run)
    if (hub.size > 0) hub.publish({ type: 'run', projectId: run.projectId, data: run })
  })
}
