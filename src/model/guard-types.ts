// The store side of SPEC §12's guards: idempotency keys, per-flow concurrency slots, cluster-wide
// rate counts, and used webhook signatures (SPEC §19). Both stores implement it (sqlite/guards.ts, postgres/guards.ts) and pass one contract
// suite (test/store/guards-contract.ts). Every claim is one atomic statement or transaction, so
// processes sharing a SQLite file, or instances sharing a PostgreSQL database, see one truth.

/** A response as it was sent, kept to answer a repeated idempotency key. */
export interface StoredResponse {
  status: number
  /** Lower-case names; the transport and CORS headers are not kept. */
  headers: Record<string, string>
  /** The body text exactly as sent ('' for none). */
  body: string
}

/** Where a key's answer lives: per flow, key and caller (SPEC §19). */
export interface IdempotencyKeyRef {
  projectId: string
  flow: string
  /**
   * A digest of who asked (the credential the Start checked and the declared header inputs): the
   * same key from another caller is another request. Never the credential itself.
   */
  caller: string
  key: string
}

export interface IdempotencyClaimRequest extends IdempotencyKeyRef {
  /** A hash of what the request asks (method, path, query, body): the same key with another one is a mismatch. */
  fingerprint: string
  /** How long an unfinished claim blocks the key: after it a crashed holder's key can be claimed again. */
  leaseMs: number
  /** How long the key (and its stored response) lives, counted from the claim. */
  ttlMs: number
}

export type IdempotencyClaim =
  /** The caller runs the flow, then completes (stores the answer) or releases the key with `token`. */
  | { kind: 'claimed'; token: string }
  /** A finished request with this key and fingerprint: its stored answer. */
  | { kind: 'replay'; response: StoredResponse }
  /** A request with this key and fingerprint is still running. */
  | { kind: 'in-flight' }
  /** The key was used for a different request. */
  | { kind: 'mismatch' }

export interface GuardStore {
  /** Claims a key atomically: exactly one of several concurrent callers gets `claimed`. */
  claimIdempotencyKey(request: IdempotencyClaimRequest): Promise<IdempotencyClaim>
  /** Stores the answer of the claim held with `token` (nothing when the claim was lost to expiry). */
  completeIdempotencyKey(ref: IdempotencyKeyRef, token: string, response: StoredResponse): Promise<void>
  /** Drops the claim held with `token`, so a retry with the key runs again. */
  releaseIdempotencyKey(ref: IdempotencyKeyRef, token: string): Promise<void>

  /**
   * Takes one of the flow's `limit` slots for `leaseMs` (a holder that dies frees it when the lease
   * ends). The holder token, or null when every slot is taken.
   */
  acquireFlowSlot(projectId: string, flow: string, limit: number, leaseMs: number): Promise<string | null>
  releaseFlowSlot(projectId: string, flow: string, token: string): Promise<void>
  /** Slots of the flow held now (leases not expired); for tests and /status. */
  heldFlowSlots(projectId: string, flow: string): Promise<number>

  /**
   * Adds `hits` to the count of one client IP in one rate window (epoch ms of its start) and
   * returns the window's count after adding, every instance's hits included.
   */
  addRateHits(projectId: string, ip: string, windowStart: number, hits: number): Promise<number>

  /**
   * Records a timestamped webhook signature (SPEC §19) of one flow as used until `expiresAt` (epoch
   * ms). True for exactly one caller across every process sharing the store; false while an
   * unexpired record of it exists (a replay).
   */
  claimSignature(projectId: string, flow: string, signature: string, expiresAt: number): Promise<boolean>
}

/** Expired idempotency keys and old rate windows are deleted at most this often per process. */
export const GUARD_PRUNE_INTERVAL_MS = 60_000
