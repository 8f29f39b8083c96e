// `idempotency: { header, ttlSeconds }` on a Start (SPEC §12). The first request with a key claims
// it in the store (one atomic statement, so two instances receiving the key at once cannot both
// run); its answer is stored when the run ends and sent again, with `Idempotent-Replayed: true`, to
// every repeat within the TTL. A repeat while the first runs gets 409; the key with another request
// 422. A claim whose holder died (a killed process) ends with its lease: the run timeout plus a margin.
// A run that fails (500) releases its key instead of storing the failure: see README, Choices.
// Answers are kept per flow, key and caller (SPEC §19): the same key from another caller (another
// credential, or other values of the Start's declared header inputs) is another request.
import { createHash } from 'node:crypto'
import type { H3Event } from 'h3'
import { httpError, type FlowctlError } from '../errors.js'
import type { IdempotencySettings } from '../project/guard-settings.js'
import { canonicalJson } from '../internal/canonical-json.js'
import type { StoredResponse } from '../model/guard-types.js'
import type { Store } from '../model/store.js'
import type { AuthSettings } from '../model/project.js'
import { authorizationCredentials } from './authorization.js'
import type { HeaderPairs } from './respond.js'

/** Longer keys are refused (400): a key is an id (Stripe allows 255 characters), not a payload. */
const MAX_KEY_LENGTH = 255
const LEASE_MARGIN_MS = 15_000
/** Headers not kept with a stored answer: they belong to the request that gets the replay. */
const NOT_STORED = /^(access-control-|vary$|date$|content-length$|transfer-encoding$|connection$|keep-alive$)/

export interface IdempotencyRequest {
  store: Store
  projectId: string
  flow: string
  settings: IdempotencySettings
  key: string
  /** `callerOf` of the request: whose answers the key may replay. */
  caller: string
  method: string
  /** Path and query string as requested. */
  target: string
  body: unknown
  runTimeoutMs: number
}

export type IdempotencyStep =
  /** A key refused (400, 409 or 422); the caller throws the error once it let go of its store work. */
  { kind: 'reject'; error: FlowctlError } | { kind: 'replay'; response: StoredResponse } | { kind: 'claimed'; claim: IdempotencyClaimHandle }

export interface IdempotencyClaimHandle {
  /** Stores the answer sent, for repeats of the key. */
  complete(response: StoredResponse): Promise<void>
  /** Frees the key: a repeat runs the flow again. */
  release(): Promise<void>
}

/** Checks the key's form (400), then claims it or finds its earlier request. */
export async function claimIdempotency(request: IdempotencyRequest): Promise<IdempotencyStep> {
  const { store, projectId, flow, settings, key, caller } = request
  if (key.length > MAX_KEY_LENGTH) {
    return { kind: 'reject', error: httpError('INPUT_INVALID', [`header/${settings.header}: must be at most ${MAX_KEY_LENGTH} characters`]) }
  }
  const claim = await store.guards.claimIdempotencyKey({
    projectId,
    flow,
    caller,
    key,
    fingerprint: fingerprintOf(request),
    leaseMs: request.runTimeoutMs + LEASE_MARGIN_MS,
    ttlMs: settings.ttlSeconds * 1000,
  })
  switch (claim.kind) {
    case 'mismatch':
      return { kind: 'reject', error: httpError('IDEMPOTENCY_MISMATCH', [`${settings.header} was already used with a different request`]) }
    case 'in-flight':
      return {
        kind: 'reject',
        error: httpError('IDEMPOTENCY_IN_PROGRESS', [`a request with this ${settings.header} is still running`], { headers: { 'retry-after': '1' } }),
      }
    case 'replay':
      return { kind: 'replay', response: claim.response }
    case 'claimed': {
      const { token } = claim
      const ref = { projectId, flow, caller, key }
      return {
        kind: 'claimed',
        claim: {
          complete: (response) => store.guards.completeIdempotencyKey(ref, token, response),
          release: () => store.guards.releaseIdempotencyKey(ref, token),
        },
      }
    }
  }
}

/**
 * Who is asking, as a sha256 digest (the credential itself is never stored): the credential the
 * Start checked (none for an open Start) and the values of the Start's declared header inputs. An
 * hmac signature changes with every body and timestamp, so for hmac the caller is "a holder of the
 * secret" and the header inputs tell senders apart.
 */
export function callerOf(auth: AuthSettings | null, headers: Headers, headerInputs: Record<string, string>): string {
  const names = Object.keys(headerInputs).sort()
  const values = names.map((name) => [name, headerInputs[name]!])
  return createHash('sha256')
    .update(JSON.stringify([auth?.type ?? 'open', presentedCredential(auth, headers), values]))
    .digest('base64url')
}

/** The credential as the request presented it (auth.ts checked it before the guards run). */
function presentedCredential(auth: AuthSettings | null, headers: Headers): string | null {
  if (!auth || auth.type === 'hmac') return null
  if (auth.type === 'bearer' || auth.type === 'basic') return authorizationCredentials(headers, auth.type)
  return headers.get(auth.header)
}

/** What the request asks: the same key with a different fingerprint is a 422. */
function fingerprintOf(request: IdempotencyRequest): string {
  const hash = createHash('sha256')
  hash.update(JSON.stringify([request.method, request.target, canonicalJson(request.body ?? null)]))
  return hash.digest('base64url')
}

/** The answer about to be sent (text with status and headers on event.res, or a bodiless Response). */
export function capturedResponse(event: H3Event, answer: Response | string): StoredResponse {
  const status = answer instanceof Response ? answer.status : (event.res.status ?? 200)
  const source = answer instanceof Response ? answer.headers : event.res.headers
  const headers: Record<string, string> = {}
  source.forEach((value, name) => {
    if (!NOT_STORED.test(name)) headers[name] = value
  })
  return { status, headers, body: typeof answer === 'string' ? answer : '' }
}

/** The stored answer, marked as a replay, with this request's CORS headers. */
export function replayedResponse(stored: StoredResponse, cors: HeaderPairs | undefined): Response {
  const headers = new Headers(stored.headers)
  headers.set('idempotent-replayed', 'true')
  if (cors) for (const name in cors) headers.set(name, cors[name]!)
  const bodiless = stored.status === 204 || stored.status === 205 || stored.status === 304
  return new Response(bodiless ? null : stored.body, { status: stored.status, headers })
}
