// The Start settings of SPEC §12's guards, read from the Start node: `idempotency` (the Run API's
// idempotency keys) and `concurrency` (a flow's concurrent runs). The Run API, the scheduler and the
// OpenAPI generator read them here.
import type { StartInfo } from '../model/project.js'

export interface IdempotencySettings {
  /** The header as written (for messages and the document) and lower-cased (for reading). */
  header: string
  headerKey: string
  ttlSeconds: number
}

export interface ConcurrencySettings {
  limit: number
  onLimit: 'reject' | 'queue'
}

export const DEFAULT_IDEMPOTENCY_HEADER = 'Idempotency-Key'
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 86_400

/** The Start's `idempotency` setting, or null. */
export function idempotencyOf(start: StartInfo): IdempotencySettings | null {
  const raw = start.node.settings.idempotency as { header?: unknown; ttlSeconds?: unknown } | undefined
  if (!raw || typeof raw !== 'object') return null
  const header = typeof raw.header === 'string' && raw.header !== '' ? raw.header : DEFAULT_IDEMPOTENCY_HEADER
  const ttl = typeof raw.ttlSeconds === 'number' && raw.ttlSeconds >= 1 ? Math.floor(raw.ttlSeconds) : DEFAULT_IDEMPOTENCY_TTL_SECONDS
  return { header, headerKey: header.toLowerCase(), ttlSeconds: ttl }
}

/** The Start's `concurrency` setting, or null (no limit). */
export function concurrencyOf(start: StartInfo): ConcurrencySettings | null {
  const raw = start.node.settings.concurrency as { limit?: unknown; onLimit?: unknown } | undefined
  return raw && typeof raw.limit === 'number' && Number.isInteger(raw.limit) && raw.limit >= 1
    ? { limit: raw.limit, onLimit: raw.onLimit === 'queue' ? 'queue' : 'reject' }
    : null
}
