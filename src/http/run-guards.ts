// The guards of SPEC §12 around one Run API call, after auth and the body are checked: the
// idempotency key (replay, 409, 422), then a concurrency slot (429 "flow busy", or a wait). The route
// calls `enterRunGuards` before the engine and `settle` or `release` after it; flows without either
// setting pay one property read.
import type { H3Event } from 'h3'
import { FlowctlError, httpError } from '../errors.js'
import { acquireFlowSlot, type FlowSlot } from '../flow/concurrency.js'
import { concurrencyOf, idempotencyOf } from '../project/guard-settings.js'
import type { Flow, Project, StartInfo } from '../model/project.js'
import type { Store } from '../model/store.js'
import { callerOf, capturedResponse, claimIdempotency, replayedResponse, type IdempotencyClaimHandle } from './idempotency.js'
import type { HeaderPairs } from './respond.js'

export interface RunGuardRequest {
  store: Store
  project: Project
  flow: Flow
  start: StartInfo
  method: string
  body: unknown
  /** The values of the Start's declared header inputs: part of who the caller is (SPEC §19). */
  headerInputs: Record<string, string>
  cors: HeaderPairs | undefined
  signal?: AbortSignal
  /** False for an async Start: its slot is taken when a worker runs it, not when it is queued. */
  concurrency?: boolean
}

export type GuardEntry = { kind: 'pass'; guards: RunGuards } | { kind: 'replay'; response: Response }

interface RunGuards {
  /** After a run with an answer: frees the slot, stores the answer (or, for a failed run, frees the key). */
  settle<T extends Response | string>(event: H3Event, answer: T, failed: boolean): Promise<T>
  /** When no run happened (invalid input, store down): frees the slot and the key. */
  release(): Promise<void>
}

const NO_GUARDS: RunGuards = { settle: async (_event, answer) => answer, release: async () => {} }
const PASS: GuardEntry = { kind: 'pass', guards: NO_GUARDS }

/** Throws a FlowctlError for a refusal: 400/409/422 (key), 429 FLOW_BUSY, 503 (store). */
export async function enterRunGuards(event: H3Event, request: RunGuardRequest): Promise<GuardEntry> {
  const { start } = request
  const idempotency = idempotencyOf(start)
  const concurrency = request.concurrency === false ? null : concurrencyOf(start)
  if (!idempotency && !concurrency) return PASS
  const { store, project, flow } = request
  const projectId = project.settings.projectId
  const runTimeoutMs = project.settings.limits.runTimeoutMs
  let claim: IdempotencyClaimHandle | null = null
  try {
    const key = idempotency ? event.req.headers.get(idempotency.headerKey) : null
    // A request without the header runs as usual (as Stripe's API does): the key is the caller's choice.
    if (idempotency && key !== null && key !== '') {
      const step = await claimIdempotency({
        store,
        projectId,
        flow: flow.slug,
        settings: idempotency,
        key,
        caller: callerOf(start.auth, event.req.headers, request.headerInputs),
        method: request.method,
        target: event.url.pathname + event.url.search,
        body: request.body,
        runTimeoutMs,
      })
      if (step.kind === 'reject') throw step.error
      if (step.kind === 'replay') return { kind: 'replay', response: replayedResponse(step.response, request.cors) }
      claim = step.claim
    }
    let slot: FlowSlot | null = null
    if (concurrency) {
      slot = await acquireFlowSlot(store, projectId, flow.slug, concurrency, runTimeoutMs, runTimeoutMs, request.signal)
      // The catch below frees the key.
      if (!slot) throw httpError('FLOW_BUSY', undefined, { headers: { 'retry-after': '1' } })
    }
    return { kind: 'pass', guards: guardsOf(claim, slot) }
  } catch (error) {
    await claim?.release().catch(() => {})
    if (error instanceof FlowctlError && error.code !== 'STORE_UNAVAILABLE') throw error
    // Whatever the store threw, the guards could not be checked: the run is refused with 503.
    throw httpError('STORE_UNAVAILABLE', undefined, { cause: error })
  }
}

function guardsOf(claim: IdempotencyClaimHandle | null, slot: FlowSlot | null): RunGuards {
  return {
    async settle(event, answer, failed) {
      await slot?.release()
      if (claim) {
        try {
          // A failed run frees its key, so the sender's retry runs again (README, Choices).
          if (failed) await claim.release()
          else await claim.complete(capturedResponse(event, answer))
        } catch {
          // The store went away after the run: the claim's lease ends by itself and a retry runs again.
        }
      }
      return answer
    },
    async release() {
      await slot?.release()
      await claim?.release().catch(() => {})
    },
  }
}
