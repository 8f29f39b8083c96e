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

  it("nested stoppers (an each's walks side by side) each race their own step, all cut off when the run stops", async () => {
    const stopper = createRunStopper(30, undefined)
    const walks = [stopper.nested(), stopper.nested(), stopper.nested().nested()]
    expect(await walks[0]!.race(Promise.resolve('done'))).toBe('done')
    const pending = walks.map((walk) => walk.race(new Promise<never>(() => {})).catch((e: unknown) => e))
    const reasons = await Promise.all(pending)
    expect(reasons.every((reason) => reason === stopper.stoppedReason)).toBe(true)
    expect((reasons[0] as Error).message).toBe('timeout')
    // Made after the stop: shares the reason and signal, races nothing.
    const late = stopper.nested()
    expect(late.stoppedReason).toBe(stopper.stoppedReason)
    expect(late.signal.aborted).toBe(true)
    await expect(late.race(Promise.resolve('late'))).rejects.toBe(stopper.stoppedReason)
    stopper.dispose()
  })

  it('the run holds nothing of a nested walk that ended: its stop does not reach a disposed one', async () => {
    const stopper = createRunStopper(20, undefined)
    const ended = stopper.nested()
    let settled = false
    void ended.race(new Promise<never>(() => {})).catch(() => (settled = true))
    ended.dispose()
    await reasonOf(stopper.stopped)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(settled).toBe(false)
    stopper.dispose()
  })

  it('a finished run does not stop later and leaves no timer behind', async () => {
    const stopper = createRunStopper(20, undefined)
    stopper.dispose()
    await new Promise((resolve) => setTimeout(resolve, 40))
    expect(stopper.stoppedReason).toBeNull()
  })
})
