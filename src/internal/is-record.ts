// The one test for "a JSON object" (not null, not an array) that reading files, settings and
// request bodies needs everywhere.

/** Whether `value` is an object that is neither null nor an array (a JSON object, a YAML map). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
