// The claim loop of serve's background runners (src/http/claim-pump.ts): at most `concurrency` items
// per project at once, one claim at a time, claims again after a full batch and when an item ends, a
// failed claim told once until one works, and stop's grace before the runner is told to stop its items.
import { describe, expect, it } from 'vitest'
import { ClaimPump } from '../../src/http/claim-pump.js'
import { eventually } from '../helpers.js'

/** A queue of numbered items per project, and items that end when the test says so. */
function harness(options: { concurrency?: number; items?: number } = {}) {
  const queued = new Map<string, number[]>([['p', Array.from({ length: options.items ?? 0 }, (_, i) => i)]])
  const claims: { projectId: string; limit: number }[] = []
  const running = new Map<number, () => void>()
  const failures: string[] = []
  let failWith: string | null = null
  let maxRunning = 0
  const pump = new ClaimPump<number>({
    concurrency: (projectId) => (projectId === 'gone' ? 0 : (options.concurrency ?? 2)),
    claim: async (projectId, limit) => {
      claims.push({ projectId, limit })
      if (failWith) throw new Error(failWith)
      return (queued.get(projectId) ?? []).splice(0, limit)
    },
    run: (item) =>
      new Promise<void>((resolve) => {
        running.set(item, () => {
          running.delete(item)
          resolve()
        })
        maxRunning = Math.max(maxRunning, running.size)
      }),
    claimFailed: (projectId, message) => void failures.push(`${projectId}: ${message}`),
  })
  return {
    pump,
    queued,
    claims,
    running,
    failures,
    fail: (message: string | null) => void (failWith = message),
    maxRunning: () => maxRunning,
    finish: (item: number) => running.get(item)!(),
  }
}

describe('ClaimPump', () => {
  it('runs at most `concurrency` items of a project at once, claiming again as each one ends', async () => {
    const h = harness({ concurrency: 2, items: 5 })
    h.pump.wake('p')
    await eventually(async () => h.running.size === 2)
    expect([...h.running.keys()]).toEqual([0, 1])
    // A full batch claims again at once; with no slot free, that claim is not made.
    await new Promise((resolve) => setImmediate(resolve))
    expect(h.claims).toEqual([{ projectId: 'p', limit: 2 }])
    h.finish(0)
    await eventually(async () => h.running.has(2))
    expect(h.claims.at(-1)).toEqual({ projectId: 'p', limit: 1 })
    for (const item of [1, 2, 3]) {
      await eventually(async () => h.running.has(item))
      h.finish(item)
    }
    await eventually(async () => h.running.has(4))
    h.finish(4)
    await eventually(async () => h.running.size === 0 && h.queued.get('p')!.length === 0)
    expect(h.maxRunning()).toBe(2)
  })

  it('makes one claim at a time: a wake during a claim asks for one more right after it', async () => {
    const h = harness({ concurrency: 4, items: 1 })
    h.pump.wake('p')
    h.pump.wake('p')
    h.pump.wake('p')
    await eventually(async () => h.claims.length === 2)
    // The second claim came after the first one took the item: 3 slots left.
    expect(h.claims).toEqual([
      { projectId: 'p', limit: 4 },
      { projectId: 'p', limit: 3 },
    ])
    h.finish(0)
  })

  it('claims nothing for a project that cannot claim now (concurrency 0)', async () => {
    const h = harness()
    h.pump.wake('gone')
    await new Promise((resolve) => setImmediate(resolve))
    expect(h.claims).toEqual([])
  })

  it('tells a failed claim once until a claim works again', async () => {
    const h = harness({ items: 0 })
    h.fail('store down')
    for (let i = 0; i < 3; i++) {
      h.pump.wake('p')
      await eventually(async () => h.claims.length === i + 1)
    }
    expect(h.failures).toEqual(['p: store down'])
    h.fail(null)
    h.pump.wake('p')
    await eventually(async () => h.claims.length === 4)
    h.fail('store down')
    h.pump.wake('p')
    await eventually(async () => h.failures.length === 2)
  })

  it('stop waits for the items under way, then tells the runner once the grace ran out, and claims no more', async () => {
    const h = harness({ concurrency: 1, items: 3 })
    h.pump.wake('p')
    await eventually(async () => h.running.has(0))
    // Within the grace: stop resolves when the item ends, without the late call.
    let late = 0
    const stopped = h.pump.stop(60_000, () => void late++)
    h.finish(0)
    await stopped
    expect(late).toBe(0)
    h.pump.wake('p')
    await new Promise((resolve) => setImmediate(resolve))
    expect(h.claims).toHaveLength(1)
    expect(h.running.size).toBe(0)

    // Past the grace: the runner is told (it stops its items), and stop waits for them to end.
    const other = harness({ concurrency: 1, items: 1 })
    other.pump.wake('p')
    await eventually(async () => other.running.has(0))
    let ended = false
    const done = other.pump.stop(10, () => other.finish(0)).then(() => (ended = true))
    await done
    expect(ended).toBe(true)
    expect(other.running.size).toBe(0)
  })
})
