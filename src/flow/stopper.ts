// Stopping a run from outside its nodes: the per-run timeout and the caller's signal.

/** Why a run was stopped from outside the node (`timeout`, `aborted`): recorded as the run's error. */
export class RunStopped extends Error {
  override name = 'RunStopped'
}

export interface RunStopper {
  /** Handed to nodes (http aborts its request with it). */
  signal: AbortSignal
  /** Rejects with RunStopped when the run is stopped; each step races it, so a node that ignores its signal is still cut off. */
  stopped: Promise<never>
  /** Clears the timer and the caller's listener. */
  dispose(): void
}

export function createRunStopper(timeoutMs: number, callerSignal: AbortSignal | undefined): RunStopper {
  const controller = new AbortController()
  // No listener on our own signal: an EventTarget listener costs more than the rest of a small run.
  let reject: (reason: RunStopped) => void = () => undefined
  const stopped = new Promise<never>((_, rejectStopped) => {
    reject = rejectStopped
  })
  stopped.catch(() => undefined)
  const stop = (reason: string) => {
    const error = new RunStopped(reason)
    reject(error)
    controller.abort(error)
  }
  const timer = timeoutMs > 0 ? setTimeout(stop, timeoutMs, 'timeout') : null
  const onCallerAbort = () => stop('aborted')
  if (callerSignal?.aborted) onCallerAbort()
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true })
  return {
    signal: controller.signal,
    stopped,
    dispose() {
      if (timer) clearTimeout(timer)
      callerSignal?.removeEventListener('abort', onCallerAbort)
    },
  }
}
