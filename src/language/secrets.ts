// `${secrets.NAME}` in text: resolving, naming and masking secrets. Pure functions over text, so the
// node kinds, the loader and the engine share them; loading the values is src/project/secrets.ts.
import type { Secrets } from '../model/project.js'
import { maskText } from './secret-masking.js'

const SECRET_REF = /\$\{secrets\.([A-Za-z0-9_]+)\}/g

/**
 * Replaces every `${secrets.NAME}` in `text`. Returns null when any secret is missing, so callers
 * can fail closed (auth) or report it (database URL).
 */
export function resolveSecretText(text: string, secrets: Secrets): string | null {
  let missing = false
  const resolved = text.replace(SECRET_REF, (_, name: string) => {
    const value = secrets.get(name)
    if (value === undefined) missing = true
    return value ?? ''
  })
  return missing ? null : resolved
}

/** Names of the secrets a text refers to. */
export function secretNamesIn(text: string): string[] {
  return [...text.matchAll(SECRET_REF)].map((m) => m[1] as string)
}

/**
 * Replaces every secret (any non-empty value) with `***`, in every form it takes in text: literal,
 * JSON-escaped, percent- and form-encoded, base64, and inside base64 words such as Basic credentials.
 */
export function maskSecrets(text: string, secrets: Secrets): string {
  return maskText(text, secrets)
}
