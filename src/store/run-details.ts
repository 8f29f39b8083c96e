// Reading back the details of a run (SPEC §14): both stores keep input and trace as JSON text,
// written once by the engine. A value that no longer parses reads as absent rather than failing.
import type { RunDetails, StoredInput, StoredTrace } from '../model/store.js'

export function parseRunDetails(input: string | null, trace: string | null): RunDetails {
  return { input: parseOrNull<StoredInput>(input), trace: parseOrNull<StoredTrace>(trace) }
}

function parseOrNull<T>(text: string | null): T | null {
  if (text === null) return null
  try {
    return JSON.parse(text) as T
  } catch {
    return null
  }
}
