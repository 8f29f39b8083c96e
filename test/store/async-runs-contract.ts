// The async-run queue contract (SPEC §12, src/model/async-runs.ts), run against every store. `open`
// and `openSecond` give two independent connections to one database, standing in for two
// processes (two `serve` instances, or two processes on one SQLite file).
import { randomBytes, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClaimedAsyncRun, NewAsyncRun } from '../../src/model/async-runs.js'
import type { RunDocument, Store } from '../../src/model/store.js'
import { makeRun } from './contract.js'

function freshProject(): string {
  return `p_${randomBytes(5).toString('hex')}`
}

let counter = 0
function queued(projectId: string, overrides: Partial<NewAsyncRun> = {}): NewAsyncRun {
  counter += 1
  return {
    id: `async_${counter}_${randomBytes(4).toString('hex')}`,
    projectId,
    flow: 'create-order',
    method: 'POST',
    input: JSON.stringify({ body: { sku: 'A-1', qty: counter } }),
    receivedAt: new Date(Date.UTC(2024, 4, 1, 9, 0, 0) + counter * 1000).toISOString(),
    ...overrides,
  }
}

const claimOptions = (limit: number, leaseMs = 30_000) => ({ limit, leaseMs, token: randomUUID() })

/** Finishes a claimed run as a worker does: its record and the response, together. */
function finish(store: Store, claimed: ClaimedAsyncRun, status: 'success' | 'error' = 'success', documents?: RunDocument[]) {
  const record = makeRun(claimed.projectId, {
    id: claimed.id,
    flow: claimed.flow,
    method: claimed.method,
    status,
    httpStatus: status === 'success' ? 201 : 500,
  })
  const response = JSON.stringify({ status: record.httpStatus, body: { ok: status === 'success' } })
  return store.queue.finish(record, 10_000, undefined, { claimToken: claimed.claimToken, response }, documents)
}

const runDocument = (document: unknown, keepExisting = false): RunDocument => ({
  collection: 'orders',
  id: randomBytes(12).toString('hex'),
  document,
  keepExisting,
})

async function recordsOf(store: Store, projectId: string): Promise<string[]> {
  return (await store.history.listRuns({ projectId, limit: 1000 })).map((run) => run.id)
}

export function describeAsyncRunsContract(name: string, open: () => Promise<Store>, openSecond: () => Promise<Store>): void {
  describe(`async runs contract: ${name}`, () => {
    let store: Store
    let other: Store

    beforeAll(async () => {
      store = await open()
      other = await openSecond()
    })
    afterAll(async () => {
      await other?.close()
      await store?.close()
    })

    it('keeps a queued run, readable by another connection, until a worker claims it', async () => {
      const projectId = freshProject()
      const run = queued(projectId)
      await store.queue.enqueue(run)
      expect(await other.queue.get(projectId, run.id)).toEqual({ runId: run.id, flow: 'create-order', status: 'queued', response: null })
      expect(await other.queue.get(projectId, 'nope')).toBeNull()
      expect(await other.queue.get(freshProject(), run.id)).toBeNull()

      const [claimed, ...rest] = await other.queue.claim(projectId, claimOptions(5))
      expect(rest).toEqual([])
      expect(claimed).toMatchObject({ id: run.id, projectId, flow: run.flow, method: 'POST', input: run.input, receivedAt: run.receivedAt, attempts: 1 })
      expect((await store.queue.get(projectId, run.id))?.status).toBe('running')
      // Claimed and leased: nobody else gets it.
      expect(await store.queue.claim(projectId, claimOptions(5))).toEqual([])
    })

    it('hands out runs oldest first, at most `limit` per claim, and only the project asked for', async () => {
      const projectId = freshProject()
      const runs = [queued(projectId), queued(projectId), queued(projectId)]
      await store.queue.enqueue(queued(freshProject()))
      for (const run of [...runs].reverse()) await store.queue.enqueue(run)
      const first = await store.queue.claim(projectId, claimOptions(2))
      expect(first.map((run) => run.id)).toEqual([runs[0]!.id, runs[1]!.id])
      const second = await store.queue.claim(projectId, claimOptions(2))
      expect(second.map((run) => run.id)).toEqual([runs[2]!.id])
    })

    it('claims round-robin across flows, oldest first within a flow (SPEC §18)', async () => {
      const projectId = freshProject()
      const a = Array.from({ length: 5 }, () => queued(projectId, { flow: 'slow' }))
      const b = [queued(projectId, { flow: 'b-flow' }), queued(projectId, { flow: 'b-flow' })]
      const c = [queued(projectId, { flow: 'c-flow' })]
      // Enqueued out of order: the order is the runs' receivedAt, not the insertion order.
      for (const run of [...c, ...b, ...a].reverse()) await store.queue.enqueue(run)
      const ids = async (on: Store, limit: number) => (await on.queue.claim(projectId, claimOptions(limit))).map((run) => run.id)
      // Everyone's first turn, oldest first (slow's run is the oldest), then slow's second run, older than b's second.
      expect(new Set(await ids(store, 4))).toEqual(new Set([a[0]!.id, b[0]!.id, c[0]!.id, a[1]!.id]))
      // slow has 2 running, b 1: b's next run goes before slow's older ones, on any connection.
      expect(await ids(other, 1)).toEqual([b[1]!.id])
      expect(await ids(store, 5)).toEqual([a[2]!.id, a[3]!.id, a[4]!.id])
    })

    it("counts a flow's runs running on another connection, so a later flow's run is claimed first", async () => {
      const projectId = freshProject()
      const backlog = Array.from({ length: 4 }, () => queued(projectId, { flow: 'slow' }))
      for (const run of backlog) await store.queue.enqueue(run)
      // Another instance took the first two while they were the only runs.
      expect((await other.queue.claim(projectId, claimOptions(2))).map((run) => run.id)).toEqual([backlog[0]!.id, backlog[1]!.id])
      const late = queued(projectId, { flow: 'other' })
      await store.queue.enqueue(late)
      expect((await store.queue.claim(projectId, claimOptions(1))).map((run) => run.id)).toEqual([late.id])
      // With nothing else waiting, the backlog goes on, oldest first.
      expect((await store.queue.claim(projectId, claimOptions(1))).map((run) => run.id)).toEqual([backlog[2]!.id])
    })

    it("takes over a run whose lease ran out in its flow's turn", async () => {
      const projectId = freshProject()
      const [stuck, next] = [queued(projectId, { flow: 'slow' }), queued(projectId, { flow: 'slow' })]
      const fresh = queued(projectId, { flow: 'other' })
      for (const run of [stuck, next, fresh]) await store.queue.enqueue(run)
      // A dead instance's claim on slow's oldest run.
      const [dead] = await other.queue.claim(projectId, claimOptions(1, 100))
      expect(dead?.id).toBe(stuck.id)
      await sleep(250)
      const taken = await store.queue.claim(projectId, claimOptions(2))
      expect(new Set(taken.map((run) => run.id))).toEqual(new Set([stuck.id, fresh.id]))
      expect(taken.find((run) => run.id === stuck.id)?.attempts).toBe(2)
      expect((await store.queue.claim(projectId, claimOptions(2))).map((run) => run.id)).toEqual([next.id])
    })

    it('gives each run to exactly one of several connections claiming at once', async () => {
      const projectId = freshProject()
      const runs = Array.from({ length: 40 }, () => queued(projectId))
      await Promise.all(runs.map((run) => store.queue.enqueue(run)))
      const claimedIds: string[] = []
      const worker = async (on: Store) => {
        for (;;) {
          const batch = await on.queue.claim(projectId, claimOptions(3))
          if (batch.length === 0) return
          claimedIds.push(...batch.map((run) => run.id))
        }
      }
      await Promise.all([worker(store), worker(other), worker(store), worker(other)])
      expect(claimedIds).toHaveLength(runs.length)
      expect(new Set(claimedIds)).toEqual(new Set(runs.map((run) => run.id)))
    })

    it('writes the record and the result together, once', async () => {
      const projectId = freshProject()
      const run = queued(projectId)
      await store.queue.enqueue(run)
      const [claimed] = await other.queue.claim(projectId, claimOptions(1))
      await finish(other, claimed!)
      expect(await store.queue.get(projectId, run.id)).toEqual({
        runId: run.id,
        flow: run.flow,
        status: 'success',
        response: { status: 201, body: { ok: true } },
      })
      expect(await recordsOf(store, projectId)).toEqual([run.id])
      // Finishing again (a duplicate worker) writes nothing more, and no listener hears of it.
      const told: string[] = []
      const stop = store.history.onRecorded((record) => void told.push(record.id))
      await expect(finish(store, claimed!)).rejects.toMatchObject({ code: 'ASYNC_CLAIM_LOST' })
      stop()
      expect(told).toEqual([])
      expect(await recordsOf(store, projectId)).toEqual([run.id])
      // A finished run is never claimed again.
      expect(await store.queue.claim(projectId, claimOptions(5, 1))).toEqual([])
    })

    it('records a failed run as error, with its answer, and tells the history listeners', async () => {
      const projectId = freshProject()
      await store.queue.enqueue(queued(projectId))
      const [claimed] = await store.queue.claim(projectId, claimOptions(1))
      const told: { id: string; status: string }[] = []
      const stop = store.history.onRecorded((record) => void (record.projectId === projectId && told.push({ id: record.id, status: record.status })))
      await finish(store, claimed!, 'error')
      stop()
      expect(told).toEqual([{ id: claimed!.id, status: 'error' }])
      expect(await other.queue.get(projectId, claimed!.id)).toMatchObject({ status: 'error', response: { status: 500, body: { ok: false } } })
      expect((await other.history.getRun(projectId, claimed!.id))?.status).toBe('error')
    })

    it('lets another connection take over a run whose lease ran out; the stale worker then writes nothing', async () => {
      const projectId = freshProject()
      const run = queued(projectId)
      await store.queue.enqueue(run)
      const [stale] = await store.queue.claim(projectId, claimOptions(1, 100))
      expect(await other.queue.claim(projectId, claimOptions(1))).toEqual([])
      await sleep(250)
      const [taken] = await other.queue.claim(projectId, claimOptions(1))
      expect(taken).toMatchObject({ id: run.id, attempts: 2 })
      expect(taken!.claimToken).not.toBe(stale!.claimToken)
      await expect(finish(store, stale!)).rejects.toMatchObject({ code: 'ASYNC_CLAIM_LOST' })
      expect(await recordsOf(other, projectId)).toEqual([])
      await finish(other, taken!)
      expect(await recordsOf(store, projectId)).toEqual([run.id])
    })

    it("commits a run's documents with its record, and none of a stale worker's, even in one shared commit", async () => {
      const projectId = freshProject()
      const [a, b] = [queued(projectId), queued(projectId)]
      await store.queue.enqueue(a)
      const [stale] = await store.queue.claim(projectId, claimOptions(1, 100))
      await store.queue.enqueue(b)
      await sleep(250)
      const [taken, claimedB] = await other.queue.claim(projectId, claimOptions(2))
      expect([taken!.id, claimedB!.id]).toEqual([a.id, b.id])
      const staleDocs = [runDocument({ by: 'stale' })]
      const bDocs = [runDocument({ by: 'b', n: 1 }), runDocument({ by: 'b', n: 2 })]
      const results = await Promise.allSettled([finish(store, stale!, 'success', staleDocs), finish(store, claimedB!, 'success', bDocs)])
      expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled'])
      expect(await other.documents.get(projectId, 'orders', staleDocs[0]!.id)).toBeNull()
      for (const d of bDocs) expect(await other.documents.get(projectId, 'orders', d.id)).toEqual({ _id: d.id, ...(d.document as object) })
      // The worker holding the claim writes its documents; one an earlier attempt committed under
      // the same id (keepExisting) is kept as it was.
      const earlier = runDocument({ attempt: 1 }, true)
      await store.documents.insertRunDocuments(projectId, [earlier])
      const takenDocs = [{ ...earlier, document: { attempt: 2 } }, runDocument({ by: 'taken' }, true)]
      await finish(other, taken!, 'success', takenDocs)
      expect(await store.documents.get(projectId, 'orders', earlier.id)).toEqual({ _id: earlier.id, attempt: 1 })
      expect(await store.documents.get(projectId, 'orders', takenDocs[1]!.id)).toEqual({ _id: takenDocs[1]!.id, by: 'taken' })
      expect((await recordsOf(store, projectId)).sort()).toEqual([a.id, b.id].sort())
    })

    it('keeps a renewed lease', async () => {
      const projectId = freshProject()
      await store.queue.enqueue(queued(projectId))
      const [claimed] = await store.queue.claim(projectId, claimOptions(1, 200))
      await store.queue.renewClaims([claimed!.claimToken], 30_000)
      await sleep(400)
      expect(await other.queue.claim(projectId, claimOptions(1))).toEqual([])
      await finish(store, claimed!)
      expect((await other.queue.get(projectId, claimed!.id))?.status).toBe('success')
    })

    it('puts a released run back in the queue for anyone', async () => {
      const projectId = freshProject()
      await store.queue.enqueue(queued(projectId))
      const [claimed] = await store.queue.claim(projectId, claimOptions(1))
      // A wrong token releases nothing.
      await store.queue.release(claimed!.id, 'not-the-token')
      expect((await other.queue.get(projectId, claimed!.id))?.status).toBe('running')
      await store.queue.release(claimed!.id, claimed!.claimToken)
      expect((await other.queue.get(projectId, claimed!.id))?.status).toBe('queued')
      const [again] = await other.queue.claim(projectId, claimOptions(1))
      expect(again).toMatchObject({ id: claimed!.id, attempts: 2 })
      await expect(finish(store, claimed!)).rejects.toMatchObject({ code: 'ASYNC_CLAIM_LOST' })
    })

    it('keeps queued runs across a closed and reopened store', async () => {
      const projectId = freshProject()
      const run = queued(projectId)
      const first = await open()
      await first.queue.enqueue(run)
      await first.close()
      const reopened = await open()
      try {
        const [claimed] = await reopened.queue.claim(projectId, claimOptions(1))
        expect(claimed?.id).toBe(run.id)
      } finally {
        await reopened.close()
      }
    })
  })
}
