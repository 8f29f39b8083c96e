// Masking secret values in everything written out (traces, history errors, error bodies).
import type { Secrets } from '../model/project.js'
import { maskSecrets } from '../project/secrets.js'

/** A copy of `value` with every secret value inside its strings (keys included) shown as `***`. */
export function maskValue(value: unknown, secrets: Secrets): unknown {
  if (!hasMaskableSecret(secrets)) return value
  return maskDeep(value, secrets)
}

function maskDeep(value: unknown, secrets: Secrets): unknown {
  if (typeof value === 'string') return maskSecrets(value, secrets)
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, secrets))
  const result: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) result[maskSecrets(key, secrets)] = maskDeep(item, secrets)
  return result
}

/** maskSecrets leaves values shorter than 4 characters alone; with none longer, nothing to do. */
function hasMaskableSecret(secrets: Secrets): boolean {
  for (const secret of secrets.values()) if (secret.length >= 4) return true
  return false
}
