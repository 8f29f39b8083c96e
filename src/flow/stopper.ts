// Stopping a run from outside its nodes: the per-run timeout and the caller's signal.

/** Why a run was stopped from outside the node (`timeout`, `aborted`): recorded as the run's error. */
export class RunStopped extends Error {
  override name = 'RunStopped'
}

export interface RunStopper {
  /** Handed to nodes (http aborts its request with it). Made on first read: most runs never need one. */
  readonly signal: AbortSignal
  /** Set once the run is stopped (checked between steps without making a signal). */
  readonly stoppedReason: RunStopped | null
  /** Rejects with RunStopped when the run is stopped. */
  readonly stopped: Promise<never>
  /**
   * `step`, or a rejection with RunStopped as soon as the run is stopped: a node that ignores its
   * signal is still cut off. One walk races one step at a time; a walk of its own (a sub-flow) gets
   * its own stopper from `nested()`.
   */
  race<T>(step: Promise<T>): Promise<T>
  /**
   * The stopper of a sub-flow's walk: this run's deadline, signal and reason, its own race. Walks
   * of an `each` run side by side, so each needs one; `dispose` it when the walk ends.
   */
  nested(): RunStopper
  /** Drops the run's deadline and the caller's listener (a nested stopper: leaves its run). */
  dispose(): void
}

export function createRunStopper(timeoutMs: number, callerSignal: AbortSignal | undefined): RunStopper {
  return new Stopper(timeoutMs, callerSignal)
}

/**
 * A class rather than an object literal with getters (those are slow to create). Nothing is made
 * for a run that is never stopped except its deadline entry: no AbortController until a node reads
 * the signal, no promise until one is raced, no listener on our own signal.
 */
class Stopper implements RunStopper {
  #reason: RunStopped | null = null
  #controller: AbortController | null = null
  #stopped: Promise<never> | null = null
  #rejectStopped: ((reason: RunStopped) => void) | null = null
  #rejectStep: ((reason: RunStopped) => void) | null = null
  #deadline: Deadline | null = null
  #unwatch: (() => void) | null = null
  /**
   * The sub-flow walks in progress, each racing its own step. Not `Promise.race` against `stopped`:
   * every race left a reaction (holding the step's result) on that one promise until the run ended,
   * and stopping an `each` of 10,000 items after 1 s settled ~100,000 of them in one synchronous go
   * (about 80 ms without a turn for anyone else, SPEC §18).
   */
  #nested: Set<NestedStopper> | null = null

  constructor(
    private readonly timeoutMs: number,
    callerSignal: AbortSignal | undefined,
  ) {
    if (timeoutMs > 0) this.#deadline = deadlinesFor(timeoutMs).add(() => this.#stop('timeout'))
    if (callerSignal?.aborted) this.#stop('aborted')
    else if (callerSignal) this.#unwatch = watchAbort(callerSignal, () => this.#stop('aborted'))
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController()
      if (this.#reason) this.#controller.abort(this.#reason)
    }
    return this.#controller.signal
  }

  get stoppedReason(): RunStopped | null {
    return this.#reason
  }

  get stopped(): Promise<never> {
    if (!this.#stopped) {
      this.#stopped = this.#reason
        ? Promise.reject(this.#reason)
        : new Promise<never>((_, reject) => {
            this.#rejectStopped = reject
          })
      this.#stopped.catch(() => undefined)
    }
    return this.#stopped
  }

  race<T>(step: Promise<T>): Promise<T> {
    if (this.#reason) return Promise.reject(this.#reason)
    return new Promise<T>((resolve, reject) => {
      this.#rejectStep = reject
      step.then(resolve, reject)
    })
  }

  nested(): RunStopper {
    const nested = new NestedStopper(this)
    if (!this.#reason) (this.#nested ??= new Set()).add(nested)
    return nested
  }

  /** A nested stopper's walk ended: it is not stopped with the run any more. */
  leave(nested: NestedStopper): void {
    this.#nested?.delete(nested)
  }

  dispose(): void {
    if (this.#deadline) deadlinesFor(this.timeoutMs).remove(this.#deadline)
    this.#deadline = null
    this.#unwatch?.()
    this.#unwatch = null
  }

  #stop(why: string): void {
    if (this.#reason) return
    const reason = new RunStopped(why)
    this.#reason = reason
    this.#rejectStopped?.(reason)
    this.#rejectStep?.(reason)
    if (this.#nested) for (const nested of this.#nested) nested.stop(reason)
    this.#nested = null
    this.#controller?.abort(reason)
  }
}

/** A sub-flow walk's stopper: the run's reason and signal, its own pending step (see Stopper.#nested). */
class NestedStopper implements RunStopper {
  #rejectStep: ((reason: RunStopped) => void) | null = null

  constructor(private readonly run: Stopper) {}

  get signal(): AbortSignal {
    return this.run.signal
  }

  get stoppedReason(): RunStopped | null {
    return this.run.stoppedReason
  }

  get stopped(): Promise<never> {
    return this.run.stopped
  }

  race<T>(step: Promise<T>): Promise<T> {
    const reason = this.run.stoppedReason
    if (reason) return Promise.reject(reason)
    return new Promise<T>((resolve, reject) => {
      this.#rejectStep = reject
      step.then(resolve, reject)
    })
  }

  nested(): RunStopper {
    return this.run.nested()
  }

  /** Called by the run when it is stopped. */
  stop(reason: RunStopped): void {
    this.#rejectStep?.(reason)
    this.#rejectStep = null
  }

  dispose(): void {
    this.run.leave(this)
  }
}

// One listener per caller signal (serve hands the same shutdown signal to every run); runs join
// and leave a Set, which costs far less than adding and removing an EventTarget listener.
const watchers = new WeakMap<AbortSignal, Set<() => void>>()

function watchAbort(signal: AbortSignal, onAbort: () => void): () => void {
  let set = watchers.get(signal)
  if (!set) {
    const callbacks = new Set<() => void>()
    signal.addEventListener(
      'abort',
      () => {
        for (const callback of [...callbacks]) callback()
        callbacks.clear()
      },
      { once: true },
    )
    watchers.set(signal, callbacks)
    set = callbacks
  }
  set.add(onAbort)
  return () => set.delete(onAbort)
}

interface Deadline {
  at: number
  stop: () => void
}

/**
 * The deadlines of all runs with one timeout, under a single timer. Runs start in time order and
 * share the timeout, so the Set's insertion order is deadline order: the timer only ever waits for
 * the first entry, and a run that ends just leaves the Set (no timer set or cleared per run).
 */
class DeadlineList {
  #entries = new Set<Deadline>()
  #timer: NodeJS.Timeout | null = null

  constructor(private readonly timeoutMs: number) {}

  add(stop: () => void): Deadline {
    const deadline = { at: performance.now() + this.timeoutMs, stop }
    this.#entries.add(deadline)
    if (!this.#timer) this.#arm(this.timeoutMs)
    return deadline
  }

  remove(deadline: Deadline): void {
    this.#entries.delete(deadline)
    // No pending runs: nothing may keep the process alive (`flowctl run` exits right after its run).
    if (this.#entries.size === 0 && this.#timer) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#fire(), ms)
  }

  #fire(): void {
    this.#timer = null
    // Timers run on the event loop's cached clock, which can trail performance.now() slightly.
    const now = performance.now() + 1
    for (const deadline of this.#entries) {
      if (deadline.at > now) {
        this.#arm(Math.ceil(deadline.at - now))
        return
      }
      this.#entries.delete(deadline)
      deadline.stop()
    }
  }
}

const deadlineLists = new Map<number, DeadlineList>()

function deadlinesFor(timeoutMs: number): DeadlineList {
  let list = deadlineLists.get(timeoutMs)
  if (!list) {
    list = new DeadlineList(timeoutMs)
    deadlineLists.set(timeoutMs, list)
  }
  return list
}
