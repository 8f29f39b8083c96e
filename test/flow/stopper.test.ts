// The run stopper: a shared timer per timeout, a signal made only when read, the caller's signal.
import { describe, expect, it } from 'vitest'
import { createRunStopper, RunStopped } from '../../src/flow/stopper.js'

const reasonOf = (promise: Promise<never>) =>
  promise.then(
    () => null,
    (error: unknown) => error,
  )

describe('createRunStopper', () => {
  it('stops each run at its own deadline, also when earlier runs with the same timeout ended', async () => {
    const first = createRunStopper(60, undefined)
    await new Promise((resolve) => setTimeout(resolve, 30))
    const second = createRunStopper(60, undefined)
    first.dispose()
    const began = performance.now()
    const error = await reasonOf(second.stopped)
    expect(error).toBeInstanceOf(RunStopped)
    expect((error as Error).message).toBe('timeout')
    expect(performance.now() - began).toBeGreaterThanOrEqual(25)
    expect(second.stoppedReason).toBe(error)
    second.dispose()
  })

  it('makes the signal on first read, aborted with the reason when the run already stopped', async () => {
    const stopper = createRunStopper(20, undefined)
    await reasonOf(stopper.stopped)
    expect(stopper.signal.aborted).toBe(true)
    expect(stopper.signal.reason).toBe(stopper.stoppedReason)
    stopper.dispose()
  })

  it('aborts a signal read before the stop', async () => {
    const stopper = createRunStopper(20, undefined)
    const signal = stopper.signal
    expect(signal.aborted).toBe(false)
    await reasonOf(stopper.stopped)
    expect(signal.aborted).toBe(true)
    expect((signal.reason as Error).message).toBe('timeout')
    stopper.dispose()
  })

  it('stops on the caller signal; a disposed run is not stopped by it', async () => {
    const caller = new AbortController()
    const running = createRunStopper(0, caller.signal)
    const ended = createRunStopper(0, caller.signal)
    ended.dispose()
    caller.abort()
    expect(((await reasonOf(running.stopped)) as Error).message).toBe('aborted')
    expect(ended.stoppedReason).toBeNull()
    running.dispose()
    // Already aborted when the run starts.
    const late = createRunStopper(0, caller.signal)
    expect(late.stoppedReason?.message).toBe('aborted')
    late.dispose()
  })

  it('race passes a step through, and cuts off a step that never settles', async () => {
    const stopper = createRunStopper(30, undefined)
    expect(await stopper.race(Promise.resolve('done'))).toBe('done')
    const error = await stopper.race(new Promise<never>(() => {})).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RunStopped)
    expect((error as Error).message).toBe('timeout')
    await expect(stopper.race(Promise.resolve('late'))).rejects.toBe(error)
    stopper.dispose()
  })

  it('a finished run does not stop later and leaves no timer behind', async () => {
    const stopper = createRunStopper(20, undefined)
    stopper.dispose()
    await new Promise((resolve) => setTimeout(resolve, 40))
    expect(stopper.stoppedReason).toBeNull()
  })
})
