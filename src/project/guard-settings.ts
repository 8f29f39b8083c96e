// The Start settings of SPEC §12's guards, `idempotency` and `concurrency`: typed and defaulted by the
// Start kind when the project loads (src/nodes/start/settings.ts). The Run API, the scheduler and the
// OpenAPI generator ask for them here.
import type { ConcurrencySettings, IdempotencySettings, StartInfo } from '../model/project.js'

export type { ConcurrencySettings, IdempotencySettings } from '../model/project.js'

/** The Start's `idempotency` setting, or null. */
export function idempotencyOf(start: StartInfo): IdempotencySettings | null {
  return start.idempotency
}

/** The Start's `concurrency` setting, or null (no limit). */
export function concurrencyOf(start: StartInfo): ConcurrencySettings | null {
  return start.concurrency
}
