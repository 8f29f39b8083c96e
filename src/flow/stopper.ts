// Stopping a run from outside its nodes: the per-run timeout and the caller's signal.
// One AbortController per run, a plain timer for the timeout and a listener on the caller's signal.
// (Issue 12: a shared deadline list, lazy signals and a listener set measured within noise; see bench/results.md.)

/** Why a run was stopped from outside the node (`timeout`, `aborted`): recorded as the run's error. */
export class RunStopped extends Error {
  override name = 'RunStopped'
}

export interface RunStopper {
  /** Handed to nodes (http aborts its request with it); aborted with the RunStopped reason. */
  readonly signal: AbortSignal
  /** Set once the run is stopped (checked between steps). */
  readonly stoppedReason: RunStopped | null
  /** Rejects with RunStopped when the run is stopped. */
  readonly stopped: Promise<never>
  /** `step`, or a rejection with RunStopped as soon as the run is stopped: a node that ignores its signal is still cut off. */
  race<T>(step: Promise<T>): Promise<T>
  /** Drops the run's timer and the caller's listener. */
  dispose(): void
}

export function createRunStopper(timeoutMs: number, callerSignal: AbortSignal | undefined): RunStopper {
  const controller = new AbortController()
  const signal = controller.signal
  const stop = (why: string) => {
    if (!signal.aborted) controller.abort(new RunStopped(why))
  }
  const onCallerAbort = () => stop('aborted')
  const timer = timeoutMs > 0 ? setTimeout(stop, timeoutMs, 'timeout') : null
  if (callerSignal?.aborted) stop('aborted')
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true })

  const stoppedReason = () => (signal.aborted ? (signal.reason as RunStopped) : null)
  const stopped = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason)
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
  stopped.catch(() => undefined) // a run that is never raced must not leave an unhandled rejection

  return {
    signal,
    get stoppedReason() {
      return stoppedReason()
    },
    stopped,
    race: <T>(step: Promise<T>) => (signal.aborted ? Promise.reject(signal.reason as RunStopped) : Promise.race([step, stopped])),
    dispose() {
      if (timer) clearTimeout(timer)
      callerSignal?.removeEventListener('abort', onCallerAbort)
    },
  }
}
