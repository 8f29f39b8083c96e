// The contract of SPEC §12's store guards (src/model/guard-types.ts), run against SQLite and
// PostgreSQL by guards.test.ts. `open` and `openSecond` give two independent connections to the
// same database, standing in for two processes or two `serve` instances.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { IdempotencyClaimRequest, StoredResponse } from '../../src/model/guard-types.js'
import type { Store } from '../../src/model/store.js'

function freshProject(): string {
  return `p_${randomBytes(5).toString('hex')}`
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export function describeGuardsContract(name: string, open: () => Promise<Store>, openSecond: () => Promise<Store>): void {
  describe(`guards contract: ${name}`, () => {
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

    const claim = (projectId: string, overrides: Partial<IdempotencyClaimRequest> = {}): IdempotencyClaimRequest => ({
      projectId,
      flow: 'pay',
      caller: 'caller-a',
      key: 'key-1',
      fingerprint: 'f1',
      leaseMs: 30_000,
      ttlMs: 60_000,
      ...overrides,
    })
    const ref = (projectId: string) => ({ projectId, flow: 'pay', caller: 'caller-a', key: 'key-1' })
    const answer: StoredResponse = { status: 201, headers: { 'content-type': 'application/json', 'x-run-id': 'r1' }, body: '{"ok":true}' }

    describe('idempotency keys', () => {
      it('gives a key to exactly one of many concurrent claims from two connections', async () => {
        const projectId = freshProject()
        const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? other : store).guards.claimIdempotencyKey(claim(projectId))))
        expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1)
        expect(claims.filter((c) => c.kind === 'in-flight')).toHaveLength(11)
      })

      it('answers the stored response once completed, a mismatch for another fingerprint, and keeps flows and projects apart', async () => {
        const projectId = freshProject()
        const first = await store.guards.claimIdempotencyKey(claim(projectId))
        if (first.kind !== 'claimed') throw new Error(`expected a claim, got ${first.kind}`)
        expect(await other.guards.claimIdempotencyKey(claim(projectId, { fingerprint: 'f2' }))).toEqual({ kind: 'mismatch' })
        await store.guards.completeIdempotencyKey(ref(projectId), first.token, answer)
        expect(await other.guards.claimIdempotencyKey(claim(projectId))).toEqual({ kind: 'replay', response: answer })
        expect(await other.guards.claimIdempotencyKey(claim(projectId, { fingerprint: 'f2' }))).toEqual({ kind: 'mismatch' })
        expect((await other.guards.claimIdempotencyKey(claim(projectId, { flow: 'refund' }))).kind).toBe('claimed')
        expect((await other.guards.claimIdempotencyKey(claim(freshProject()))).kind).toBe('claimed')
      })

      it('keeps callers apart: the same key and request from another caller is claimed anew (SPEC §19)', async () => {
        const projectId = freshProject()
        const first = await store.guards.claimIdempotencyKey(claim(projectId))
        if (first.kind !== 'claimed') throw new Error(`expected a claim, got ${first.kind}`)
        await store.guards.completeIdempotencyKey(ref(projectId), first.token, answer)
        const second = await other.guards.claimIdempotencyKey(claim(projectId, { caller: 'caller-b' }))
        if (second.kind !== 'claimed') throw new Error(`expected caller-b to claim the key, got ${second.kind}`)
        // caller-b's answer is its own, and caller-a still gets the first one back.
        const answerB: StoredResponse = { ...answer, body: '{"ok":"b"}' }
        await other.guards.completeIdempotencyKey({ ...ref(projectId), caller: 'caller-b' }, second.token, answerB)
        expect(await store.guards.claimIdempotencyKey(claim(projectId, { caller: 'caller-b' }))).toEqual({ kind: 'replay', response: answerB })
        expect(await store.guards.claimIdempotencyKey(claim(projectId))).toEqual({ kind: 'replay', response: answer })
        // Completing or releasing under another caller touches nothing.
        await other.guards.releaseIdempotencyKey({ ...ref(projectId), caller: 'caller-b' }, first.token)
        expect(await store.guards.claimIdempotencyKey(claim(projectId))).toEqual({ kind: 'replay', response: answer })
      })

      it('frees a released key for the next claim, and ignores a release or completion with a stale token', async () => {
        const projectId = freshProject()
        const first = await store.guards.claimIdempotencyKey(claim(projectId))
        if (first.kind !== 'claimed') throw new Error('expected a claim')
        await other.guards.releaseIdempotencyKey(ref(projectId), 'not-the-token')
        expect((await other.guards.claimIdempotencyKey(claim(projectId))).kind).toBe('in-flight')
        await store.guards.releaseIdempotencyKey(ref(projectId), first.token)
        const second = await other.guards.claimIdempotencyKey(claim(projectId, { fingerprint: 'f2' }))
        expect(second.kind).toBe('claimed')
        await store.guards.completeIdempotencyKey(ref(projectId), first.token, answer) // stale: changes nothing
        expect((await store.guards.claimIdempotencyKey(claim(projectId, { fingerprint: 'f2' }))).kind).toBe('in-flight')
      })

      it('lets a claim whose holder died be taken when its lease ends, and a finished key when its TTL ends', async () => {
        const projectId = freshProject()
        const dead = await store.guards.claimIdempotencyKey(claim(projectId, { leaseMs: 150 }))
        expect(dead.kind).toBe('claimed')
        expect((await other.guards.claimIdempotencyKey(claim(projectId))).kind).toBe('in-flight')
        await sleep(400)
        const taken = await other.guards.claimIdempotencyKey(claim(projectId, { ttlMs: 300 }))
        if (taken.kind !== 'claimed') throw new Error(`expected the abandoned key to be claimed, got ${taken.kind}`)
        await other.guards.completeIdempotencyKey(ref(projectId), taken.token, answer)
        expect((await store.guards.claimIdempotencyKey(claim(projectId))).kind).toBe('replay')
        await sleep(500)
        expect((await store.guards.claimIdempotencyKey(claim(projectId, { fingerprint: 'f3' }))).kind).toBe('claimed')
      })
    })

    describe('flow slots', () => {
      it('hands out at most `limit` slots across two connections, and frees them on release', async () => {
        const projectId = freshProject()
        const tokens = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? other : store).guards.acquireFlowSlot(projectId, 'sync', 3, 30_000)))
        const held = tokens.filter((t): t is string => t !== null)
        expect(held).toHaveLength(3)
        expect(await store.guards.heldFlowSlots(projectId, 'sync')).toBe(3)
        expect(await other.guards.acquireFlowSlot(projectId, 'other-flow', 3, 30_000)).not.toBeNull()
        await other.guards.releaseFlowSlot(projectId, 'sync', held[0]!)
        await other.guards.releaseFlowSlot(projectId, 'sync', 'not-a-holder')
        expect(await store.guards.heldFlowSlots(projectId, 'sync')).toBe(2)
        expect(await store.guards.acquireFlowSlot(projectId, 'sync', 3, 30_000)).not.toBeNull()
        expect(await store.guards.acquireFlowSlot(projectId, 'sync', 3, 30_000)).toBeNull()
      })

      it('frees the slot of a holder that died when its lease ends, and follows a changed limit', async () => {
        const projectId = freshProject()
        expect(await store.guards.acquireFlowSlot(projectId, 'sync', 1, 150)).not.toBeNull()
        expect(await other.guards.acquireFlowSlot(projectId, 'sync', 1, 30_000)).toBeNull()
        await sleep(400)
        const taken = await other.guards.acquireFlowSlot(projectId, 'sync', 1, 30_000)
        expect(taken).not.toBeNull()
        // A higher limit (a reloaded flow) adds slots; the held one still counts.
        expect(await store.guards.acquireFlowSlot(projectId, 'sync', 2, 30_000)).not.toBeNull()
        expect(await store.guards.acquireFlowSlot(projectId, 'sync', 2, 30_000)).toBeNull()
      })
    })

    describe('rate counts', () => {
      it('adds the hits of every connection into one count per project, IP and window', async () => {
        const projectId = freshProject()
        const window = Math.floor(Date.now() / 60_000) * 60_000
        const totals = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? other : store).guards.addRateHits(projectId, '10.0.0.1', window, 3)))
        expect(Math.max(...totals)).toBe(30)
        expect(new Set(totals).size).toBe(10) // each addition saw its own total: no lost update
        expect(await store.guards.addRateHits(projectId, '10.0.0.2', window, 1)).toBe(1)
        expect(await store.guards.addRateHits(projectId, '10.0.0.1', window + 60_000, 1)).toBe(1)
        expect(await other.guards.addRateHits(freshProject(), '10.0.0.1', window, 1)).toBe(1)
      })
    })

    describe('used signatures (SPEC §19)', () => {
      it('lets exactly one of many concurrent callers use a signature, on either connection', async () => {
        const projectId = freshProject()
        const until = Date.now() + 300_000
        const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? other : store).guards.claimSignature(projectId, 'hook', 'sig-1', until)))
        expect(claims.filter(Boolean)).toHaveLength(1)
        expect(await other.guards.claimSignature(projectId, 'hook', 'sig-1', until)).toBe(false)
        // Another signature, another flow or another project is another use.
        expect(await other.guards.claimSignature(projectId, 'hook', 'sig-2', until)).toBe(true)
        expect(await store.guards.claimSignature(projectId, 'other-hook', 'sig-1', until)).toBe(true)
        expect(await store.guards.claimSignature(freshProject(), 'hook', 'sig-1', until)).toBe(true)
      })

      it('forgets a signature once its record expired (its timestamp is then refused anyway)', async () => {
        const projectId = freshProject()
        expect(await store.guards.claimSignature(projectId, 'hook', 'sig-1', Date.now() + 150)).toBe(true)
        expect(await other.guards.claimSignature(projectId, 'hook', 'sig-1', Date.now() + 150)).toBe(false)
        await sleep(300)
        expect(await other.guards.claimSignature(projectId, 'hook', 'sig-1', Date.now() + 60_000)).toBe(true)
        expect(await store.guards.claimSignature(projectId, 'hook', 'sig-1', Date.now() + 60_000)).toBe(false)
      })
    })
  })
}
