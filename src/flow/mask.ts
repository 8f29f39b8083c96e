// Masking secret values in everything written out (traces, history errors, error bodies).
import type { Secrets } from '../model/project.js'
import { hasSecrets, jsonHoldsSecret } from '../language/secret-masking.js'
import { maskSecrets } from '../language/secrets.js'

/**
 * `value` with every secret inside its strings (keys included), in any of its encoded forms, shown
 * as `***`. Parts that hold no secret are shared with `value`, not copied.
 */
export function maskValue(value: unknown, secrets: Secrets): unknown {
  if (!hasSecrets(secrets)) return value
  // One scan of the JSON first: most values hold no secret and are returned as they are.
  if (typeof value === 'object' && value !== null && !jsonHoldsSecret(JSON.stringify(value) ?? '', secrets)) return value
  return maskDeep(value, secrets)
}

/** JSON of `value` with secrets (in any of their encoded forms) shown as `***`. */
export function maskedJson(value: unknown, secrets: Secrets): string {
  const json = JSON.stringify(value) ?? 'null'
  if (!hasSecrets(secrets) || !jsonHoldsSecret(json, secrets)) return json
  return JSON.stringify(maskDeep(value, secrets)) ?? 'null'
}

function maskDeep(value: unknown, secrets: Secrets): unknown {
  if (typeof value === 'string') return maskSecrets(value, secrets)
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let changed = false
    const items = value.map((item) => {
      const masked = maskDeep(item, secrets)
      if (masked !== item) changed = true
      return masked
    })
    return changed ? items : value
  }
  let changed = false
  const result: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const maskedKey = maskSecrets(key, secrets)
    const masked = maskDeep(item, secrets)
    if (maskedKey !== key || masked !== item) changed = true
    result[maskedKey] = masked
  }
  return changed ? result : value
}
