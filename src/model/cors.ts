// Reading the `cors` fields (flowctl.yaml, or a Start's override) and the one rule they must keep.
import type { CorsSettings } from './project.js'
import { isRecord } from '../internal/is-record.js'

/** The `cors` fields written (flowctl.yaml or a Start), without defaults; null when not an object. */
export function readCors(value: unknown): Partial<CorsSettings> | null {
  if (!isRecord(value)) return null
  const cors: Partial<CorsSettings> = {}
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((item): item is string => typeof item === 'string' && item !== '') : undefined)
  const origins = strings(value.origins)
  const headers = strings(value.headers)
  if (origins) cors.origins = origins
  if (headers) cors.headers = headers
  if (typeof value.credentials === 'boolean') cors.credentials = value.credentials
  if (typeof value.maxAgeSeconds === 'number' && Number.isInteger(value.maxAgeSeconds) && value.maxAgeSeconds >= 0) cors.maxAgeSeconds = value.maxAgeSeconds
  return cors
}

/** `"*"` with credentials would let any site act with a visitor's cookies: a load problem. */
export function corsProblem(cors: CorsSettings | null): string | null {
  if (!cors || !cors.credentials || !cors.origins.includes('*')) return null
  return 'cors: "*" (any origin) is allowed only without credentials; list the origins, or set credentials: false'
}
