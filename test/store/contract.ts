// The store contract: every Store implementation runs this suite. `open` gives a store; `openSecond`
// gives a second, independent connection to the SAME database, standing in for another process
// (another `serve` instance, a crontab `tick`).
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { storedInputText } from '../../src/flow/run-details.js'
import type { RunDocument, RunRecord, Store } from '../../src/model/store.js'
import { describeDocumentsContract } from './documents-contract.js'

let runCounter = 0

export function makeRun(projectId: string, overrides: Partial<RunRecord> = {}): RunRecord {
  runCounter += 1
  return {
    id: `run_${runCounter}_${randomBytes(4).toString('hex')}`,
    projectId,
    flow: 'create-order',
    trigger: 'http',
    method: 'POST',
    startedAt: new Date(Date.UTC(2024, 4, 1, 9, 0, 0) + runCounter * 1000).toISOString(),
    durationMs: 12,
    status: 'success',
    httpStatus: 201,
    ports: [],
    failedNodeId: null,
    error: null,
    scheduledFor: null,
    replayOf: null,
    resumedFrom: null,
    ...overrides,
  }
}

/** A project id no other test uses, so tests share one database without seeing each other. */
function freshProject(): string {
  return `p_${randomBytes(5).toString('hex')}`
}

function at(minutes: number): string {
  return new Date(Date.UTC(2024, 4, 1, 9, 0, 0) + minutes * 60_000).toISOString()
}

export function describeStoreContract(name: string, open: () => Promise<Store>, openSecond: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
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

    describe('runs', () => {
      it('gives back exactly the record it was given', async () => {
        const projectId = freshProject()
        const ok = makeRun(projectId, {
          ports: [
            { nodeId: 'check', port: 'true' },
            { nodeId: 'route', port: 'big' },
          ],
        })
        const failed = makeRun(projectId, {
          flow: 'nightly',
          trigger: 'cron',
          method: 'CRON',
          durationMs: 30001,
          status: 'error',
          httpStatus: null,
          failedNodeId: 'call',
          error: 'timeout',
          scheduledFor: '2024-05-01T09:00:00.000Z',
        })
        await store.history.recordRun(ok, 100)
        await store.history.recordRun(failed, 100)
        expect(await store.history.getRun(projectId, ok.id)).toStrictEqual({ ...ok, input: null, trace: null })
        expect(await store.history.getRun(projectId, failed.id)).toStrictEqual({ ...failed, input: null, trace: null })
        expect(await store.history.listRuns({ projectId })).toStrictEqual([failed, ok])
      })

      it('keeps input, trace and replayOf; lists leave input and trace out', async () => {
        const projectId = freshProject()
        const first = makeRun(projectId)
        const replay = makeRun(projectId, { replayOf: first.id })
        const input = { body: { sku: 'A-1', qty: 2 }, path: {}, query: { dryRun: true }, headers: { 'x-tenant': 't1' } }
        const trace = {
          runId: replay.id,
          durationMs: 1.5,
          steps: [{ nodeId: 'start', type: 'start', name: 'Start', port: 'out', durationMs: 0.1, output: { sku: 'A-1' } }],
          cut: false,
        }
        await store.history.recordRun(first, 100)
        await store.history.recordRun(replay, 100, { input: JSON.stringify(input), trace: JSON.stringify(trace) })
        expect(await store.history.getRun(projectId, replay.id)).toStrictEqual({ ...replay, input, trace })
        const listed = await store.history.listRuns({ projectId })
        expect(listed[0]).toStrictEqual(replay)
        expect(Object.keys(listed[0]!)).not.toContain('trace')
        expect((await store.history.getRun(projectId, first.id))?.replayOf).toBeNull()
      })

      it('keeps resumedFrom of a retry from the failed step, in getRun and in lists (SPEC §22)', async () => {
        const projectId = freshProject()
        const failed = makeRun(projectId, { status: 'error', httpStatus: 500, failedNodeId: 'check', error: 'boom' })
        const retry = makeRun(projectId, { replayOf: failed.id, resumedFrom: 'check' })
        const trace = {
          runId: retry.id,
          durationMs: 2,
          steps: [{ nodeId: 'fetch', type: 'http', name: 'Fetch', port: 'out', durationMs: 1, output: { status: 200 }, reused: true }],
          cut: false,
        }
        await store.history.recordRun(failed, 100)
        await store.history.recordRun(retry, 100, { input: '{"path":{},"query":{},"headers":{}}', trace: JSON.stringify(trace) })
        expect(await store.history.getRun(projectId, retry.id)).toMatchObject({ replayOf: failed.id, resumedFrom: 'check', trace })
        expect((await store.history.listRuns({ projectId }))[0]).toStrictEqual(retry)
        expect((await store.history.getRun(projectId, failed.id))?.resumedFrom).toBeNull()
      })

      it('lists the replays of a run (the run page links to them, SPEC §21)', async () => {
        const projectId = freshProject()
        const first = makeRun(projectId)
        const other = makeRun(projectId)
        const replays = [makeRun(projectId, { replayOf: first.id }), makeRun(projectId, { replayOf: other.id }), makeRun(projectId, { replayOf: first.id })]
        for (const run of [first, other, ...replays]) await store.history.recordRun(run, 100)
        const listed = await store.history.listRuns({ projectId, flow: first.flow, replayOf: first.id, after: first.startedAt })
        expect(listed.map((run) => run.id)).toEqual([replays[2]!.id, replays[0]!.id])
        expect(await store.history.listRuns({ projectId, replayOf: 'no-such-run' })).toEqual([])
      })

      it('keeps an input cut at limits.storedInputBytes as written (SPEC §18)', async () => {
        const projectId = freshProject()
        const run = makeRun(projectId)
        const body = { text: `"quoted" ünïcödé 😀 ${'x'.repeat(200_000)}` }
        const text = storedInputText({ body, path: { id: 7 }, query: {}, headers: {} }, new Map(), 65_536)
        await store.history.recordRun(run, 100, { input: text, trace: null })
        const stored = await store.history.getRun(projectId, run.id)
        expect(stored?.input).toStrictEqual(JSON.parse(text))
        expect(stored?.input).toMatchObject({ cut: true, path: { id: 7 } })
        expect(String(stored?.input?.body)).toMatch(/^\{"text":"\\"quoted\\" ünïcödé 😀 x+… \[cut: /)
      })

      it('finds no run under another project or an unknown id', async () => {
        const projectId = freshProject()
        const run = makeRun(projectId)
        await store.history.recordRun(run, 100)
        expect(await store.history.getRun(freshProject(), run.id)).toBeNull()
        expect(await store.history.getRun(projectId, 'no-such-run')).toBeNull()
        expect(await store.history.listRuns({ projectId: freshProject() })).toEqual([])
      })

      it('lists newest first by startedAt, ties by insertion order', async () => {
        const projectId = freshProject()
        const times = [at(5), at(1), at(9), at(3)]
        for (const startedAt of times) await store.history.recordRun(makeRun(projectId, { startedAt, id: `t${startedAt}` }), 100)
        const same1 = makeRun(projectId, { startedAt: at(20) })
        const same2 = makeRun(projectId, { startedAt: at(20) })
        await store.history.recordRun(same1, 100)
        await store.history.recordRun(same2, 100)
        const listed = await store.history.listRuns({ projectId })
        expect(listed.map((r) => r.startedAt)).toEqual([at(20), at(20), at(9), at(5), at(3), at(1)])
        expect(listed.slice(0, 2).map((r) => r.id)).toEqual([same2.id, same1.id])
      })

      it('filters by flow, status and after, and honours limit (default 50)', async () => {
        const projectId = freshProject()
        for (let i = 0; i < 60; i++) {
          await store.history.recordRun(
            makeRun(projectId, {
              startedAt: at(i),
              flow: i % 2 === 0 ? 'even' : 'odd',
              status: i % 3 === 0 ? 'error' : 'success',
            }),
            1000,
          )
        }
        expect(await store.history.listRuns({ projectId })).toHaveLength(50)
        expect(await store.history.listRuns({ projectId, limit: 100 })).toHaveLength(60)
        const two = await store.history.listRuns({ projectId, limit: 2 })
        expect(two.map((r) => r.startedAt)).toEqual([at(59), at(58)])

        const even = await store.history.listRuns({ projectId, flow: 'even', limit: 100 })
        expect(even).toHaveLength(30)
        expect(even.every((r) => r.flow === 'even')).toBe(true)

        const errors = await store.history.listRuns({ projectId, status: 'error', limit: 100 })
        expect(errors).toHaveLength(20)
        expect(errors.every((r) => r.status === 'error')).toBe(true)

        const evenErrors = await store.history.listRuns({ projectId, flow: 'even', status: 'error', limit: 100 })
        expect(evenErrors.map((r) => r.startedAt)).toEqual([54, 48, 42, 36, 30, 24, 18, 12, 6, 0].map(at))

        // `after` is strict: the run at minute 55 itself is not included.
        const recent = await store.history.listRuns({ projectId, after: at(55) })
        expect(recent.map((r) => r.startedAt)).toEqual([at(59), at(58), at(57), at(56)])
        expect(await store.history.listRuns({ projectId, after: at(55), flow: 'odd', status: 'success' })).toHaveLength(1)
        expect(await store.history.listRuns({ projectId, flow: 'none' })).toEqual([])
      })

      it('keeps only the newest runs when history passes the cap', async () => {
        const projectId = freshProject()
        for (let i = 0; i < 50; i++) await store.history.recordRun(makeRun(projectId, { startedAt: at(i) }), 20)
        const kept = await store.history.listRuns({ projectId, limit: 1000 })
        expect(kept).toHaveLength(20)
        expect(kept.at(-1)?.startedAt).toBe(at(30))
        expect(kept[0]?.startedAt).toBe(at(49))
      })

      it('holds a large cap within a 1% margin, and trims the oldest', async () => {
        const projectId = freshProject()
        for (let i = 0; i < 450; i++) await store.history.recordRun(makeRun(projectId, { startedAt: at(i) }), 300)
        const kept = await store.history.listRuns({ projectId, limit: 10_000 })
        expect(kept.length).toBeGreaterThanOrEqual(300)
        expect(kept.length).toBeLessThanOrEqual(303)
        expect(kept[0]?.startedAt).toBe(at(449))
        // Whatever was kept is the newest, contiguous block.
        expect(kept.at(-1)?.startedAt).toBe(at(450 - kept.length))
      })

      it('holds the cap when two instances write to one project', async () => {
        const projectId = freshProject()
        for (let i = 0; i < 40; i++) await (i % 2 === 0 ? store : other).history.recordRun(makeRun(projectId, { startedAt: at(i) }), 10)
        const kept = await store.history.listRuns({ projectId, limit: 1000 })
        expect(kept.length).toBeLessThanOrEqual(10)
        expect(kept[0]?.startedAt).toBe(at(39))
      })

      it('resolves 200 concurrent recordRun calls past a small cap and ends within cap + slack', async () => {
        const projectId = freshProject()
        const runs = Array.from({ length: 200 }, (_, i) => makeRun(projectId, { startedAt: at(i) }))
        const results = await Promise.allSettled(runs.map((run) => store.history.recordRun(run, 50)))
        expect(results.filter((r) => r.status === 'rejected')).toEqual([])
        // One instance: once every call resolved, history is back at the cap (slack is 0 below 100).
        const kept = await store.history.listRuns({ projectId, limit: 1000 })
        expect(kept).toHaveLength(50)
        expect(kept[0]?.startedAt).toBe(at(199))
        expect(kept.at(-1)?.startedAt).toBe(at(150))
      })

      it('resolves 200 concurrent recordRun calls from two instances past a small cap', async () => {
        const projectId = freshProject()
        const runs = Array.from({ length: 200 }, (_, i) => makeRun(projectId, { startedAt: at(i) }))
        const results = await Promise.allSettled(runs.map((run, i) => (i % 2 === 0 ? store : other).history.recordRun(run, 50)))
        expect(results.filter((r) => r.status === 'rejected')).toEqual([])
        // Several instances: a trim skipped because the other instance was trimming is retried
        // shortly after, so history settles back to cap + slack per instance (0 here) at once or soon.
        const count = async () => (await store.history.countRuns(projectId, null, null)).success
        await expect.poll(count, { timeout: 3000, interval: 50 }).toBeLessThanOrEqual(50)
        const kept = await store.history.listRuns({ projectId, limit: 1000 })
        expect(kept.length).toBeGreaterThanOrEqual(50)
        expect(kept[0]?.startedAt).toBe(at(199))
        expect(kept.at(-1)?.startedAt).toBe(at(200 - kept.length))
      })

      // The Run API under load on a full history: every in-flight call passes the cap at once. Trims
      // used to run concurrently and deadlock (PostgreSQL), failing calls whose runs were committed.
      it('resolves 400 concurrent recordRun calls on a full 10,000-run history and stays within 1%', async () => {
        const projectId = freshProject()
        for (let i = 0; i < 11; i++) {
          await Promise.all(Array.from({ length: 1000 }, (_, j) => store.history.recordRun(makeRun(projectId, { startedAt: at(i * 1000 + j) }), 0)))
        }
        const runs = Array.from({ length: 400 }, (_, i) => makeRun(projectId, { startedAt: at(20_000 + i) }))
        const results = await Promise.allSettled(runs.map((run, i) => (i % 4 === 0 ? other : store).history.recordRun(run, 10_000)))
        expect(results.filter((r) => r.status === 'rejected')).toEqual([])
        const count = async () => (await store.history.countRuns(projectId, null, null)).success
        await expect.poll(count, { timeout: 3000, interval: 50 }).toBeLessThanOrEqual(10_000 + 2 * 100)
        expect(await count()).toBeGreaterThanOrEqual(10_000)
        expect((await store.history.listRuns({ projectId, limit: 1 }))[0]?.id).toBe(runs.at(-1)!.id)
      }, 30_000)

      it('makes each of 100 concurrent runs and documents visible to another instance once its call resolved', async () => {
        const projectId = freshProject()
        const runs = Array.from({ length: 100 }, (_, i) => makeRun(projectId, { startedAt: at(i), ports: [{ nodeId: 'n', port: String(i) }] }))
        const seen = await Promise.all(runs.map((run) => store.history.recordRun(run, 1000).then(() => other.history.getRun(projectId, run.id))))
        expect(seen).toStrictEqual(runs.map((run) => ({ ...run, input: null, trace: null })))
        const docs = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.documents.insert(projectId, 'c', { i }).then(async (id) => [id, await other.documents.get(projectId, 'c', id)] as const),
          ),
        )
        expect(docs.map(([, doc]) => doc)).toEqual(docs.map(([id], i) => ({ _id: id, i })))
        expect(new Set(docs.map(([id]) => id)).size).toBe(20)
      })

      it('fails only the call whose run id is already taken when calls share a commit', async () => {
        const projectId = freshProject()
        const first = makeRun(projectId)
        await store.history.recordRun(first, 100)
        const fresh = Array.from({ length: 5 }, () => makeRun(projectId))
        const results = await Promise.allSettled([...fresh, { ...first }].map((run) => store.history.recordRun(run, 100)))
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected'])
        expect(await other.history.countRuns(projectId, null, null)).toEqual({ success: 6, error: 0 })
      })

      it('counts runs by status, per flows and since a time', async () => {
        const projectId = freshProject()
        const plan: [string, 'success' | 'error', number][] = [
          ['a', 'success', 1],
          ['a', 'error', 2],
          ['b', 'success', 3],
          ['b', 'error', 4],
          ['c', 'error', 5],
          ['a', 'success', 6],
        ]
        for (const [flow, status, minute] of plan) await store.history.recordRun(makeRun(projectId, { flow, status, startedAt: at(minute) }), 100)
        expect(await store.history.countRuns(projectId, null, null)).toEqual({ success: 3, error: 3 })
        expect(await store.history.countRuns(projectId, ['a'], null)).toEqual({ success: 2, error: 1 })
        expect(await store.history.countRuns(projectId, ['a', 'c'], null)).toEqual({ success: 2, error: 2 })
        expect(await store.history.countRuns(projectId, null, at(3))).toEqual({ success: 1, error: 2 })
        expect(await store.history.countRuns(projectId, ['b'], at(3))).toEqual({ success: 0, error: 1 })
        expect(await store.history.countRuns(projectId, [], null)).toEqual({ success: 0, error: 0 })
        expect(await store.history.countRuns(freshProject(), null, null)).toEqual({ success: 0, error: 0 })
      })

      it('makes a recorded run visible to another instance as soon as recordRun resolves', async () => {
        const projectId = freshProject()
        const run = makeRun(projectId, { ports: [{ nodeId: 'x', port: 'false' }] })
        await store.history.recordRun(run, 100)
        expect(await other.history.getRun(projectId, run.id)).toStrictEqual({ ...run, input: null, trace: null })
        expect(await other.history.listRuns({ projectId })).toStrictEqual([run])
      })
    })

    describe('recorded listeners (history.onRecorded)', () => {
      it('tells each listener of a committed record, with its documents, before recordRun resolves; an unsubscribed one no more', async () => {
        const projectId = freshProject()
        const seen: { id: string; documents: string[]; visible: boolean }[] = []
        const pending: Promise<void>[] = []
        const stop = store.history.onRecorded((run, documents) => {
          if (run.projectId !== projectId) return
          const entry = { id: run.id, documents: documents.map((d) => d.id), visible: false }
          seen.push(entry)
          // Called after the commit: another instance already sees the record.
          pending.push(other.history.getRun(projectId, run.id).then((stored) => void (entry.visible = stored !== null)))
        })
        const document: RunDocument = { collection: 'orders', id: randomBytes(12).toString('hex'), document: { sku: 'A' }, keepExisting: false }
        const first = makeRun(projectId)
        await store.history.recordRun(first, 100, undefined, [document])
        expect(seen.map((entry) => entry.id)).toEqual([first.id])
        const second = makeRun(projectId)
        await store.history.recordRun(second, 100)
        await Promise.all(pending)
        expect(seen).toEqual([
          { id: first.id, documents: [document.id], visible: true },
          { id: second.id, documents: [], visible: true },
        ])
        stop()
        stop() // a second call removes nothing else
        await store.history.recordRun(makeRun(projectId), 100)
        expect(seen).toHaveLength(2)
      })

      it('never fails the run for a listener that throws (it is logged), and tells the listeners after it', async () => {
        const projectId = freshProject()
        const told: string[] = []
        const logged: string[] = []
        const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
          logged.push(String(chunk))
          return true
        })
        const stops = [
          store.history.onRecorded((run) => {
            if (run.projectId === projectId) throw new Error('listener broke')
          }),
          store.history.onRecorded((run) => void (run.projectId === projectId && told.push(run.id))),
        ]
        try {
          const run = makeRun(projectId)
          await store.history.recordRun(run, 100)
          expect(told).toEqual([run.id])
          expect(await store.history.getRun(projectId, run.id)).toMatchObject({ id: run.id })
          expect(logged.join('')).toContain(`run ${run.id} is recorded): listener broke`)
        } finally {
          write.mockRestore()
          for (const stop of stops) stop()
        }
      })

      it('tells no listener of a record that failed to commit', async () => {
        const projectId = freshProject()
        const told: string[] = []
        const stop = store.history.onRecorded((run) => void (run.projectId === projectId && told.push(run.id)))
        try {
          const run = makeRun(projectId)
          await store.history.recordRun(run, 100)
          // The same id again: the primary key refuses it.
          await expect(store.history.recordRun(run, 100)).rejects.toThrow()
          expect(told).toEqual([run.id])
        } finally {
          stop()
        }
      })
    })

    describe('documents', () => {
      it('stores documents under string ids and gives them back', async () => {
        const projectId = freshProject()
        const doc = { sku: 'A-1', qty: 3, tags: ['x', 'y'], nested: { ok: true, none: null }, text: 'héllo "quoted"' }
        const id = await store.documents.insert(projectId, 'orders', doc)
        const id2 = await store.documents.insert(projectId, 'orders', { sku: 'B' })
        expect(typeof id).toBe('string')
        expect(id.length).toBeGreaterThan(0)
        expect(id2).not.toBe(id)
        expect(await store.documents.get(projectId, 'orders', id)).toEqual({ _id: id, ...doc })
        expect(await other.documents.get(projectId, 'orders', id2)).toEqual({ _id: id2, sku: 'B' })
        expect(Object.keys((await store.documents.get(projectId, 'orders', id)) as object)[0]).toBe('_id')
        expect(await store.documents.get(projectId, 'other', id)).toBeNull()
        expect(await store.documents.get(freshProject(), 'orders', id)).toBeNull()
        expect(await store.documents.get(projectId, 'orders', 'missing')).toBeNull()
      })

      it('stores documents that are not objects', async () => {
        const projectId = freshProject()
        const list = await store.documents.insert(projectId, 'c', [1, 'two', { three: 3 }])
        const text = await store.documents.insert(projectId, 'c', 'just text')
        expect(await store.documents.get(projectId, 'c', list)).toEqual([1, 'two', { three: 3 }])
        expect(await store.documents.get(projectId, 'c', text)).toBe('just text')
      })
    })

    describe('a run and its documents (one commit per run)', () => {
      const newId = () => randomBytes(12).toString('hex')
      const doc = (collection: string, document: unknown, keepExisting = false): RunDocument => ({ collection, id: newId(), document, keepExisting })

      it('makes a run and its documents visible to another instance together, once recordRun resolved', async () => {
        const projectId = freshProject()
        const run = makeRun(projectId)
        const documents = [doc('orders', { sku: 'A', qty: 2 }), doc('orders', { sku: 'B' }), doc('audit', 'a text document')]
        // The second id sorts first, so only the insertion order can list A before B.
        documents[0]!.id = `f${documents[0]!.id.slice(1)}`
        documents[1]!.id = `0${documents[1]!.id.slice(1)}`
        await store.history.recordRun(run, 100, undefined, documents)
        expect(await other.history.getRun(projectId, run.id)).toMatchObject({ id: run.id })
        expect(await other.documents.get(projectId, 'orders', documents[0]!.id)).toEqual({ _id: documents[0]!.id, sku: 'A', qty: 2 })
        expect(await other.documents.get(projectId, 'audit', documents[2]!.id)).toBe('a text document')
        // Insertion order is kept (documents without a sort come back in insertion order).
        const found = await other.documents.find(projectId, 'orders', { filter: { kind: 'all', items: [] }, limit: 10 })
        expect(found.documents).toEqual([
          { _id: documents[0]!.id, sku: 'A', qty: 2 },
          { _id: documents[1]!.id, sku: 'B' },
        ])
      })

      it('writes none of the documents when the record cannot be written (its id is taken)', async () => {
        const projectId = freshProject()
        const first = makeRun(projectId)
        await store.history.recordRun(first, 100)
        const documents = [doc('orders', { n: 1 }), doc('orders', { n: 2 })]
        const fresh = makeRun(projectId)
        const freshDocs = [doc('orders', { n: 3 })]
        // Sharing one group commit: only the run whose record fails loses its documents.
        const results = await Promise.allSettled([
          store.history.recordRun({ ...first }, 100, undefined, documents),
          store.history.recordRun(fresh, 100, undefined, freshDocs),
        ])
        expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled'])
        for (const d of documents) expect(await other.documents.get(projectId, 'orders', d.id)).toBeNull()
        expect(await other.documents.get(projectId, 'orders', freshDocs[0]!.id)).toEqual({ _id: freshDocs[0]!.id, n: 3 })
        expect(await other.history.countRuns(projectId, null, null)).toEqual({ success: 2, error: 0 })
      })

      it('writes no record when one of its documents cannot be written (a duplicate id)', async () => {
        const projectId = freshProject()
        const existing = doc('orders', { old: true })
        await store.documents.insertRunDocuments(projectId, [existing])
        const run = makeRun(projectId)
        const other1 = doc('orders', { n: 1 })
        await expect(store.history.recordRun(run, 100, undefined, [other1, { ...existing, document: { old: false } }])).rejects.toBeDefined()
        expect(await other.history.getRun(projectId, run.id)).toBeNull()
        expect(await other.documents.get(projectId, 'orders', other1.id)).toBeNull()
        expect(await other.documents.get(projectId, 'orders', existing.id)).toEqual({ _id: existing.id, old: true })
      })

      it('keeps a document already stored under the id of a keepExisting insert, and writes the record', async () => {
        const projectId = freshProject()
        const earlier = doc('orders', { attempt: 1 }, true)
        await store.documents.insertRunDocuments(projectId, [earlier])
        const run = makeRun(projectId)
        const next = doc('orders', { attempt: 2, second: true }, true)
        await store.history.recordRun(run, 100, undefined, [{ ...earlier, document: { attempt: 2 } }, next])
        expect(await other.history.getRun(projectId, run.id)).toMatchObject({ id: run.id })
        expect(await other.documents.get(projectId, 'orders', earlier.id)).toEqual({ _id: earlier.id, attempt: 1 })
        expect(await other.documents.get(projectId, 'orders', next.id)).toEqual({ _id: next.id, attempt: 2, second: true })
      })

      it("commits a run's documents ahead of its record all or nothing", async () => {
        const projectId = freshProject()
        const batch = [doc('c', { i: 1 }), doc('c', { i: 2 })]
        await store.documents.insertRunDocuments(projectId, batch)
        for (const d of batch) expect(await other.documents.get(projectId, 'c', d.id)).toEqual({ _id: d.id, ...(d.document as object) })
        const failing = [doc('c', { i: 3 }), { ...batch[0]!, document: { i: 4 } }]
        await expect(store.documents.insertRunDocuments(projectId, failing)).rejects.toBeDefined()
        expect(await other.documents.get(projectId, 'c', failing[0]!.id)).toBeNull()
        expect(await other.documents.get(projectId, 'c', batch[0]!.id)).toEqual({ _id: batch[0]!.id, i: 1 })
      })
    })

    describeDocumentsContract(() => ({ store, other }))

    describe('schedule claims', () => {
      it('grants each schedule and minute once', async () => {
        const projectId = freshProject()
        expect(await store.schedules.claimMinute(projectId, 'nightly', at(0))).toBe(true)
        expect(await store.schedules.claimMinute(projectId, 'nightly', at(0))).toBe(false)
        expect(await other.schedules.claimMinute(projectId, 'nightly', at(0))).toBe(false)
        expect(await store.schedules.claimMinute(projectId, 'nightly', at(1))).toBe(true)
        expect(await store.schedules.claimMinute(projectId, 'hourly', at(0))).toBe(true)
        expect(await store.schedules.claimMinute(freshProject(), 'nightly', at(0))).toBe(true)
      })

      it('treats two spellings of one ISO minute as the same claim', async () => {
        const projectId = freshProject()
        expect(await store.schedules.claimMinute(projectId, 's', '2024-05-01T09:00:00.000Z')).toBe(true)
        expect(await other.schedules.claimMinute(projectId, 's', '2024-05-01T09:00:00Z')).toBe(false)
      })

      it('gives exactly one of 20 concurrent claims on one instance', async () => {
        const projectId = freshProject()
        const results = await Promise.all(Array.from({ length: 20 }, () => store.schedules.claimMinute(projectId, 's', at(7))))
        expect(results.filter(Boolean)).toHaveLength(1)
      })

      it('gives exactly one of 20 concurrent claims across two instances', async () => {
        const projectId = freshProject()
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : other).schedules.claimMinute(projectId, 's', at(8))))
        expect(results.filter(Boolean)).toHaveLength(1)
      })

      it('keeps a claim however old, after claims of much later minutes (SPEC §20: a minute runs once, forever)', async () => {
        const projectId = freshProject()
        const old = '2023-01-01T00:00:00.000Z'
        expect(await store.schedules.claimMinute(projectId, 's', old)).toBe(true)
        // Claims a year and two years later used to prune everything a week older than themselves.
        expect(await store.schedules.claimMinute(projectId, 's', '2024-01-01T00:00:00.000Z')).toBe(true)
        expect(await other.schedules.claimMinute(projectId, 's', '2025-01-01T00:00:00.000Z')).toBe(true)
        expect(await store.schedules.claimMinute(projectId, 's', old)).toBe(false)
        expect(await other.schedules.claimMinute(projectId, 's', old)).toBe(false)
        expect(await store.schedules.claimedMinutes(projectId, 's', old, old)).toEqual([old])
      })

      it('lists the claimed minutes of one schedule in a range, oldest first, to either instance', async () => {
        const projectId = freshProject()
        for (const k of [3, 1, 5, 9]) await store.schedules.claimMinute(projectId, 's', at(k))
        await store.schedules.claimMinute(projectId, 'other', at(2))
        expect(await other.schedules.claimedMinutes(projectId, 's', at(1), at(5))).toEqual([at(1), at(3), at(5)])
        expect(await store.schedules.claimedMinutes(projectId, 's', at(6), at(8))).toEqual([])
        expect(await store.schedules.claimedMinutes(freshProject(), 's', at(0), at(9))).toEqual([])
      })
    })

    describe('heartbeat', () => {
      it('keeps the latest heartbeat per project', async () => {
        const projectId = freshProject()
        expect(await store.schedules.getHeartbeat(projectId)).toBeNull()
        const first = { projectId, at: at(0), summary: { ok: true, ran: 2, errors: 0 } }
        await store.schedules.saveHeartbeat(first)
        expect(await other.schedules.getHeartbeat(projectId)).toEqual(first)
        const second = { projectId, at: at(1), summary: { ok: false, ran: 1, errors: 1, nested: { a: [1] } } }
        await other.schedules.saveHeartbeat(second)
        expect(await store.schedules.getHeartbeat(projectId)).toEqual(second)
        expect(await store.schedules.getHeartbeat(freshProject())).toBeNull()
      })
    })

    describe('cursors and outbox', () => {
      it('moves a cursor only from the expected value', async () => {
        const projectId = freshProject()
        expect(await store.schedules.getCursor(projectId, 'alert:0')).toBeNull()
        expect(await store.schedules.advanceCursor(projectId, 'alert:0', at(5), at(6), null)).toBe(false)
        expect(await store.schedules.getCursor(projectId, 'alert:0')).toBeNull()
        expect(await store.schedules.advanceCursor(projectId, 'alert:0', null, at(1), null)).toBe(true)
        expect(await other.schedules.getCursor(projectId, 'alert:0')).toBe(at(1))
        expect(await store.schedules.advanceCursor(projectId, 'alert:0', null, at(9), { channel: 'ops', payload: { text: 'lost' } })).toBe(false)
        expect(await store.schedules.advanceCursor(projectId, 'alert:0', at(0), at(9), null)).toBe(false)
        expect(await store.schedules.getCursor(projectId, 'alert:0')).toBe(at(1))
        expect(await store.schedules.advanceCursor(projectId, 'alert:0', at(1), at(2), null)).toBe(true)
        expect(await store.schedules.getCursor(projectId, 'alert:0')).toBe(at(2))
        expect(await store.schedules.getCursor(projectId, 'digest:0')).toBeNull()
        // A losing CAS enqueued nothing, and a null message enqueues nothing.
        expect(await store.schedules.leaseOutbox(projectId, 60_000, new Date())).toEqual([])
      })

      it('lets exactly one of two racing instances advance a first-ever cursor, and enqueues only its message', async () => {
        const projectId = freshProject()
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 === 0 ? store : other).schedules.advanceCursor(projectId, 'digest:0', null, at(i + 1), { channel: 'ops', payload: { from: i } }),
          ),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
        const winner = results.indexOf(true)
        expect(await store.schedules.getCursor(projectId, 'digest:0')).toBe(at(winner + 1))
        const leased = await other.schedules.leaseOutbox(projectId, 60_000, new Date())
        expect(leased.map((m) => m.payload)).toEqual([{ from: winner }])
      })

      it('lets exactly one of two racing instances advance an existing cursor', async () => {
        const projectId = freshProject()
        await store.schedules.advanceCursor(projectId, 'alert:0', null, at(0), null)
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 === 0 ? store : other).schedules.advanceCursor(projectId, 'alert:0', at(0), at(i + 1), { channel: 'ops', payload: { from: i } }),
          ),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
        const leased = await store.schedules.leaseOutbox(projectId, 60_000, new Date())
        expect(leased).toHaveLength(1)
        expect(leased[0]?.payload).toEqual({ from: results.indexOf(true) })
      })

      it('leases a message with its fields, and not again while the lease holds', async () => {
        const projectId = freshProject()
        const payload = { text: 'create-order failed 2 times', runs: ['r1', 'r2'], count: 2 }
        await store.schedules.advanceCursor(projectId, 'alert:0', null, at(1), { channel: 'ops', payload })
        const now = new Date()
        const leased = await store.schedules.leaseOutbox(projectId, 60_000, now)
        expect(leased).toHaveLength(1)
        const message = leased[0]!
        expect(typeof message.id).toBe('string')
        expect(message).toMatchObject({ projectId, channel: 'ops', payload, attempts: 0, lastError: null })
        expect(new Date(message.createdAt).toISOString()).toBe(message.createdAt)
        expect(await store.schedules.leaseOutbox(projectId, 60_000, now)).toEqual([])
        expect(await other.schedules.leaseOutbox(projectId, 60_000, new Date(now.getTime() + 30_000))).toEqual([])
        expect(await other.schedules.leaseOutbox(freshProject(), 60_000, now)).toEqual([])
      })

      it('never leases one message to two instances at once', async () => {
        const projectId = freshProject()
        for (let i = 0; i < 8; i++) {
          expect(await store.schedules.advanceCursor(projectId, `rule:${i}`, null, at(i), { channel: 'ops', payload: { n: i } })).toBe(true)
        }
        const now = new Date()
        const batches = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : other).schedules.leaseOutbox(projectId, 60_000, now)))
        const ids = batches.flat().map((m) => m.id)
        expect(ids).toHaveLength(8)
        expect(new Set(ids).size).toBe(8)
        expect(
          batches
            .flat()
            .map((m) => m.payload.n)
            .sort(),
        ).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
      })

      it('leases a message again once its lease has expired', async () => {
        const projectId = freshProject()
        await store.schedules.advanceCursor(projectId, 'alert:0', null, at(1), { channel: 'ops', payload: { n: 1 } })
        const now = Date.now()
        const [first] = await store.schedules.leaseOutbox(projectId, 1000, new Date(now))
        expect(first).toBeDefined()
        expect(await other.schedules.leaseOutbox(projectId, 1000, new Date(now + 500))).toEqual([])
        const again = await other.schedules.leaseOutbox(projectId, 1000, new Date(now + 2000))
        expect(again.map((m) => m.id)).toEqual([first!.id])
      })

      it('frees a failed message for the next tick and counts its attempts', async () => {
        const projectId = freshProject()
        await store.schedules.advanceCursor(projectId, 'alert:0', null, at(1), { channel: 'ops', payload: { n: 1 } })
        const now = new Date()
        const [message] = await store.schedules.leaseOutbox(projectId, 60_000, now)
        await store.schedules.markFailed(message!.id, 'HTTP 502 from webhook')
        const [retry] = await other.schedules.leaseOutbox(projectId, 60_000, now)
        expect(retry).toMatchObject({ id: message!.id, attempts: 1, lastError: 'HTTP 502 from webhook' })
        await other.schedules.markFailed(retry!.id, 'timeout')
        const [third] = await store.schedules.leaseOutbox(projectId, 60_000, now)
        expect(third).toMatchObject({ id: message!.id, attempts: 2, lastError: 'timeout' })
      })

      it('never leases a delivered message again', async () => {
        const projectId = freshProject()
        await store.schedules.advanceCursor(projectId, 'a', null, at(1), { channel: 'ops', payload: { n: 1 } })
        await store.schedules.advanceCursor(projectId, 'b', null, at(1), { channel: 'local', payload: { n: 2 } })
        const now = Date.now()
        const leased = await store.schedules.leaseOutbox(projectId, 1000, new Date(now))
        expect(leased.map((m) => m.payload.n)).toEqual([1, 2])
        await store.schedules.markDelivered(leased[0]!.id)
        await store.schedules.markFailed(leased[1]!.id, 'disk full')
        const later = await other.schedules.leaseOutbox(projectId, 1000, new Date(now + 60_000))
        expect(later.map((m) => m.payload.n)).toEqual([2])
        await other.schedules.markDelivered(later[0]!.id)
        expect(await store.schedules.leaseOutbox(projectId, 1000, new Date(now + 120_000))).toEqual([])
        // Unknown ids are ignored.
        await store.schedules.markDelivered('999999999')
        await store.schedules.markFailed('not-an-id', 'x')
      })
    })
  })
}
