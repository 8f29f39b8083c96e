// The two log lines of a store outage (src/http/store-outage.ts) under overlapping runs: a run that
// was already in flight when the outage was logged does not log the store back, so another one still
// in flight cannot log the outage a second time. A fake clock orders the runs' starts and ends.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { AppContext } from '../../src/http/context.js'
import { noteStoreBack, noteStoreOutage } from '../../src/http/store-outage.js'
import type { Project } from '../../src/model/project.js'

const project = { settings: { projectId: 'shop' }, secrets: new Map() } as unknown as Project

function logged() {
  const lines: string[] = []
  const context = { log: (line: string) => void lines.push(line) } as unknown as AppContext
  const count = (pattern: RegExp) => lines.filter((line) => pattern.test(line)).length
  return { context, lines, outages: () => count(/shop is unavailable/), backs: () => count(/shop is back/) }
}

/** A run's start time, then a millisecond later on the fake clock (so no two events share an instant). */
function start(): number {
  const at = performance.now()
  vi.advanceTimersByTime(1)
  return at
}

describe('store outage log lines', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['performance'] }))
  afterEach(() => void vi.useRealTimers())

  it('logs one outage and one recovery when runs in flight end on either side of it', () => {
    const { context, lines, outages, backs } = logged()
    const early = start()
    const inFlight = start()
    const alsoInFlight = start()
    noteStoreOutage(context, project, new Error('connection terminated')) // a run fails: the outage is logged
    vi.advanceTimersByTime(1)
    noteStoreBack(context, 'shop', early) // began before the outage was logged: no recovery line
    noteStoreOutage(context, project, new Error('connection terminated')) // would be a second outage line if the above had logged
    noteStoreBack(context, 'shop', inFlight)
    expect(lines).toHaveLength(1)
    const after = start()
    noteStoreBack(context, 'shop', after) // began after the outage was logged: the store is back
    noteStoreBack(context, 'shop', alsoInFlight)
    expect({ outages: outages(), backs: backs() }).toEqual({ outages: 1, backs: 1 })
    expect(lines).toEqual([
      'store of project shop is unavailable, so its runs answer 503 until it is back: connection terminated',
      'store of project shop is back; runs are recorded again',
    ])
  })

  it('logs a later outage again, with its own recovery', () => {
    const { context, outages, backs } = logged()
    noteStoreOutage(context, project, 'not open')
    vi.advanceTimersByTime(1)
    noteStoreBack(context, 'shop', start())
    noteStoreOutage(context, project, 'not open')
    vi.advanceTimersByTime(1)
    noteStoreBack(context, 'shop', start())
    expect({ outages: outages(), backs: backs() }).toEqual({ outages: 2, backs: 2 })
  })

  it('logs nothing while the store answers', () => {
    const { context, lines } = logged()
    noteStoreBack(context, 'shop', start())
    expect(lines).toEqual([])
  })
})
