// The `retry` and `onError` settings every node but start and end may carry (SPEC §13).
import type { JsonSchema } from '../model/project.js'

export interface RetrySettings {
  attempts: number
  delayMs: number
  factor: number
  maxDelayMs: number
}

const RETRY_DEFAULTS: Omit<RetrySettings, 'attempts'> = { delayMs: 200, factor: 2, maxDelayMs: 10_000 }

/** Settings-schema properties added to every kind but start and end. */
export const COMMON_SETTINGS: Record<string, JsonSchema> = {
  retry: {
    description: 'Tries the node again when it fails: attempts in all (1-10), waiting delayMs, then delayMs × factor, ... (at most maxDelayMs).',
    type: 'object',
    additionalProperties: false,
    required: ['attempts'],
    properties: {
      attempts: { type: 'integer', minimum: 1, maximum: 10 },
      delayMs: { type: 'integer', minimum: 0, default: RETRY_DEFAULTS.delayMs },
      factor: { type: 'number', minimum: 1, default: RETRY_DEFAULTS.factor },
      maxDelayMs: { type: 'integer', minimum: 0, default: RETRY_DEFAULTS.maxDelayMs },
    },
  },
  onError: {
    description: 'The id of the node that runs when this node still fails after its retries; its output is then { error, attempts }.',
    type: 'string',
    minLength: 1,
  },
}

/** The node's retry settings with defaults; one attempt when it has none. */
export function retryOf(settings: Record<string, unknown>): RetrySettings {
  const raw = settings.retry as Partial<RetrySettings> | undefined
  if (!raw || typeof raw !== 'object') return { attempts: 1, ...RETRY_DEFAULTS }
  return {
    attempts: typeof raw.attempts === 'number' ? Math.min(10, Math.max(1, Math.trunc(raw.attempts))) : 1,
    delayMs: typeof raw.delayMs === 'number' ? raw.delayMs : RETRY_DEFAULTS.delayMs,
    factor: typeof raw.factor === 'number' ? raw.factor : RETRY_DEFAULTS.factor,
    maxDelayMs: typeof raw.maxDelayMs === 'number' ? raw.maxDelayMs : RETRY_DEFAULTS.maxDelayMs,
  }
}

/** The wait before attempt `next` (2, 3, ...): delayMs × factor^(next-2), capped at maxDelayMs. */
export function retryDelayMs(retry: RetrySettings, next: number): number {
  return Math.min(retry.maxDelayMs, retry.delayMs * retry.factor ** (next - 2))
}
