// The parked-runs contract (SPEC §22, src/model/waits.ts), run against every store. `open` and
// `openSecond` give two independent connections to one database, standing in for two processes.
import { randomBytes, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/model/store.js'
import { isParkClaimLost, type ParkedRunWrite } from '../../src/model/waits.js'
import { makeRun } from './contract.js'

const project = () => `p_${randomBytes(5).toString('hex')}`

function parked(projectId: string, overrides: Partial<ParkedRunWrite> = {}): ParkedRunWrite {
  return {
    id: `run_${randomBytes(6).toString('hex')}`,
    projectId,
    flow: 'approve',
    kind: 'callback',
    dueAt: Date.now() + 3_600_000,
    state: JSON.stringify({ v: 1, nodeId: 'wait' }),
    seq: 1,
    ...overrides,
  }
}

const waitingRecord = (write: ParkedRunWrite) => makeRun(write.projectId, { id: write.id, flow: write.flow, status: 'waiting', httpStatus: null })
/** A history cap the tests below never reach. */
const CAP = 10_000
const claim = (store: Store, projectId: string, limit = 10, leaseMs = 30_000) => store.waits.claimDue(projectId, { limit, leaseMs, token: randomUUID() })

export function describeWaitsContract(name: string, open: () => Promise<Store>, openSecond: () => Promise<Store>): void {
  describe(`parked runs: ${name}`, () => {
    let store: Store
    let second: Store
    beforeAll(async () => {
      store = await open()
      second = await openSecond()
    })
    afterAll(async () => {
      await store?.close()
      await second?.close()
    })

    it('keeps one resume key per project, the same for every connection', async () => {
      const id = project()
      const [a, b] = await Promise.all([store.waits.resumeKey(id), second.waits.resumeKey(id)])
      expect(a).toMatch(/^[0-9a-f]{64}$/)
      expect(b).toBe(a)
      expect(await store.waits.resumeKey(project())).not.toBe(a)
    })

    it('parks with a waiting record; a callback is delivered once and claimed once, then finished once', async () => {
      const id = project()
      const write = parked(id)
      await store.waits.park(write, waitingRecord(write), CAP, undefined, [])
      expect((await store.history.getRun(id, write.id))?.status).toBe('waiting')
      expect(await store.waits.countWaiting(id)).toBe(1)
      expect(await claim(store, id)).toEqual([])

      expect(await store.waits.deliver(id, write.id, 2, '{"body":1}')).toBe('already') // a token of another park
      const delivered = await Promise.all([store.waits.deliver(id, write.id, 1, '{"body":1}'), second.waits.deliver(id, write.id, 1, '{"body":2}')])
      expect(delivered.sort()).toEqual(['already', 'delivered'])
      const claims = await Promise.all([claim(store, id), claim(second, id)])
      const taken = claims.flat()
      expect(taken).toHaveLength(1)
      expect(taken[0]).toMatchObject({ id: write.id, port: 'out', seq: 1, kind: 'callback' })
      expect(JSON.parse(taken[0]!.payload!)).toHaveProperty('body')

      const final = makeRun(id, { id: write.id, flow: 'approve', status: 'success', httpStatus: 200 })
      await expect(store.waits.finish(final, undefined, 'not-the-token', '{}', [])).rejects.toSatisfy(isParkClaimLost)
      await store.waits.finish(final, undefined, taken[0]!.claimToken, '{"status":200,"body":null}', [])
      await expect(second.waits.finish(final, undefined, taken[0]!.claimToken, '{}', [])).rejects.toSatisfy(isParkClaimLost)
      const runs = await store.history.listRuns({ projectId: id })
      expect(runs.map((run) => [run.id, run.status, run.httpStatus])).toEqual([[write.id, 'success', 200]])
      expect(await store.waits.countWaiting(id)).toBe(0)
      expect(await store.waits.deliver(id, write.id, 1, '{}')).toBe('already')
      expect(await store.waits.deliver(id, 'no-such-run', 1, '{}')).toBe('missing')
    })

    it('a wait past its due time is claimed by one caller, on port timeout for callbacks and out for sleeps', async () => {
      const id = project()
      const callback = parked(id, { dueAt: Date.now() + 300 })
      const nap = parked(id, { kind: 'sleep', dueAt: Date.now() + 300 })
      for (const write of [callback, nap]) await store.waits.park(write, waitingRecord(write), CAP, undefined, [])
      expect(await claim(store, id)).toEqual([])
      await sleep(500)
      expect(await store.waits.deliver(id, callback.id, 1, '{}')).toBe('expired')
      const claims = (await Promise.all([claim(store, id), claim(second, id), claim(store, id)])).flat()
      expect(claims.map((c) => [c.id, c.port]).sort()).toEqual(
        [
          [callback.id, 'timeout'],
          [nap.id, 'out'],
        ].sort(),
      )
      expect(await store.waits.deliver(id, callback.id, 1, '{}')).toBe('expired')
    })

    it('a claim whose lease ran out is taken again; the stale holder can neither finish nor park again', async () => {
      const id = project()
      const write = parked(id, { kind: 'sleep', dueAt: Date.now() - 1 })
      await store.waits.park(write, waitingRecord(write), CAP, undefined, [])
      const [first] = await claim(store, id, 10, 200)
      expect(first).toBeDefined()
      expect(await claim(second, id)).toEqual([])
      await sleep(400)
      const [again] = await claim(second, id)
      expect(again?.id).toBe(write.id)
      const record = waitingRecord(write)
      await expect(store.waits.park({ ...write, seq: 2, claimToken: first!.claimToken }, record, CAP, undefined, [])).rejects.toSatisfy(isParkClaimLost)
      // The holder parks it again at a later wait: waiting, with the new seq, claimable once due.
      await second.waits.park({ ...write, seq: 2, dueAt: Date.now() - 1, claimToken: again!.claimToken }, record, CAP, undefined, [])
      expect(await store.waits.lookup(id, write.id)).toMatchObject({ status: 'waiting', seq: 2 })
      const [third] = await claim(store, id)
      expect(third).toMatchObject({ id: write.id, seq: 2 })
    })

    it('a waiting record counts toward the history cap and is never trimmed while its run waits', async () => {
      const id = project()
      const cap = 10 // slack is 0 below 100
      const at = (i: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString()
      const finished = (i: number) => store.history.recordRun(makeRun(id, { startedAt: at(i) }), cap)
      // The oldest run parks; newer runs fill history past the cap twice over.
      const old = parked(id)
      await store.waits.park(old, makeRun(id, { id: old.id, flow: old.flow, status: 'waiting', httpStatus: null, startedAt: at(0) }), cap, undefined, [])
      for (let i = 1; i <= 2 * cap; i++) await finished(i)
      let kept = await store.history.listRuns({ projectId: id, limit: 1000 })
      expect(kept.find((run) => run.id === old.id)?.status).toBe('waiting')
      // The newest `cap` runs, plus the older run that still waits.
      expect(kept.filter((run) => run.status === 'success').map((run) => run.startedAt)).toEqual(Array.from({ length: cap }, (_, i) => at(2 * cap - i)))
      // Its final record replaces the waiting one: nothing was lost, nothing counted twice.
      await store.waits.deliver(id, old.id, 1, '{"body":{}}')
      const [resumed] = await claim(store, id)
      await store.waits.finish(makeRun(id, { id: old.id, flow: old.flow, startedAt: at(0) }), undefined, resumed!.claimToken, '{}', [])
      kept = await store.history.listRuns({ projectId: id, limit: 1000 })
      expect(kept.filter((run) => run.id === old.id).map((run) => run.status)).toEqual(['success'])

      // A run that parks is counted like any recorded run: the park that passes the cap trims.
      const other = project()
      for (let i = 1; i <= cap; i++) await store.history.recordRun(makeRun(other, { startedAt: at(i) }), cap)
      const late = parked(other)
      await store.waits.park(
        late,
        makeRun(other, { id: late.id, flow: late.flow, status: 'waiting', httpStatus: null, startedAt: at(cap + 1) }),
        cap,
        undefined,
        [],
      )
      kept = await store.history.listRuns({ projectId: other, limit: 1000 })
      expect(kept).toHaveLength(cap)
      expect(kept[0]).toMatchObject({ id: late.id, status: 'waiting' })
      expect(kept.at(-1)?.startedAt).toBe(at(2))
    })

    it('an async run parks only while its queue claim holds, and its queue row finishes with the run', async () => {
      const id = project()
      const runId = `async_${randomBytes(6).toString('hex')}`
      await store.queue.enqueue({ id: runId, projectId: id, flow: 'approve', method: 'POST', input: '{}', receivedAt: new Date().toISOString() })
      const [queued] = await store.queue.claim(id, { limit: 1, leaseMs: 30_000, token: randomUUID() })
      const write = parked(id, { id: runId })
      await expect(store.waits.park({ ...write, asyncClaimToken: 'stale' }, waitingRecord(write), CAP, undefined, [])).rejects.toSatisfy(isParkClaimLost)
      expect(await store.waits.lookup(id, runId)).toBeNull()
      await store.waits.park({ ...write, asyncClaimToken: queued!.claimToken }, waitingRecord(write), CAP, undefined, [])
      expect((await store.queue.get(id, runId))?.status).toBe('waiting')
      expect(await store.waits.deliver(id, runId, 1, '{"body":{"ok":true}}')).toBe('delivered')
      const [resumed] = await claim(second, id)
      const final = makeRun(id, { id: runId, flow: 'approve', status: 'success', httpStatus: 201 })
      await second.waits.finish(final, undefined, resumed!.claimToken, '{"status":201,"body":{"done":true}}', [])
      expect(await store.queue.get(id, runId)).toEqual({ runId, flow: 'approve', status: 'success', response: { status: 201, body: { done: true } } })
    })
  })
}
