// What history keeps of a run beside its record (SPEC §14): the validated input and the trace, as
// JSON text made once here, with secrets shown as `***`, step outputs capped at `limits.traceBytes`
// per run and the input at `limits.storedInputBytes` (SPEC §18). The stores write the text as it is.
import type { HistoryKeep, Secrets } from '../model/project.js'
import type { RunDetailsText } from '../model/store.js'
import type { ValidatedInput } from './inputs.js'
import { maskedJson } from './mask.js'
import { hasSecrets, jsonHoldsSecret } from '../language/secret-masking.js'
import type { TraceStep } from '../model/run.js'

/** Whether a run with this outcome keeps its input and trace. */
export function keepsDetails(keep: HistoryKeep, failed: boolean): boolean {
  return keep === 'all' || (keep === 'failed' && failed)
}

/** The marker that replaces outputs past the cap (the step that crosses it keeps a prefix before it). */
export function cutMarker(traceBytes: number): string {
  return `[cut: this run's trace passed limits.traceBytes (${traceBytes} bytes)]`
}

/** What replaces the end of an input past `limits.storedInputBytes` (a prefix of its JSON stays before it). */
export function inputCutMarker(storedInputBytes: number): string {
  return `[cut: this run's input passed limits.storedInputBytes (${storedInputBytes} bytes)]`
}

export interface DetailsSource {
  input: ValidatedInput | null
  /** The cap of the stored input's JSON, in bytes (`limits.storedInputBytes`). */
  storedInputBytes: number
  runId: string
  durationMs: number
  /** Steps with their raw outputs (not masked yet). */
  steps: TraceStep[]
  secrets: Secrets
  traceBytes: number
}

export function runDetailsText(source: DetailsSource): RunDetailsText {
  const { secrets } = source
  // Values the input's scan found no secret in: a step whose output is one of them (the Start's is
  // the body) is not scanned again (a 1 MB body cost ~10 ms a scan).
  const clean = new WeakSet<object>()
  const input = source.input === null ? null : storedInputText(source.input, secrets, source.storedInputBytes, clean)
  const state = { budget: source.traceBytes, cut: false, traceBytes: source.traceBytes, secrets, clean }
  const steps = stepsJson(source.steps, state)
  const trace = `{"runId":${JSON.stringify(source.runId)},"durationMs":${source.durationMs},"steps":${steps},"cut":${state.cut}}`
  return { input, trace }
}

/**
 * The input's JSON, or when it is longer than `limitBytes`, a record of the same shape whose body is
 * a prefix of the body's JSON (as text) ending with the marker, and `cut: true` (replay refuses it).
 * Path, query and header values stay as they are when they fit in half the cap; otherwise the
 * prefix is of the whole input's JSON and they are left empty. The result is never over the cap.
 */
export function storedInputText(input: ValidatedInput, secrets: Secrets, limitBytes: number, clean?: WeakSet<object>): string {
  const raw = JSON.stringify(input)
  // The JSON of each part is a piece of the whole's (with the same word boundaries): when the whole
  // holds no secret, neither does any part, and none is scanned again.
  const holdsSecret = hasSecrets(secrets) && jsonHoldsSecret(raw, secrets)
  if (!holdsSecret && typeof input.body === 'object' && input.body !== null) clean?.add(input.body)
  const json = holdsSecret ? (value: unknown) => maskedJson(value, secrets) : (value: unknown) => JSON.stringify(value) ?? 'null'
  const whole = holdsSecret ? json(input) : raw
  if (whole.length <= limitBytes && Buffer.byteLength(whole) <= limitBytes) return whole
  const parameters = `"path":${json(input.path)},"query":${json(input.query)},"headers":${json(input.headers)}`
  const keepParameters = Buffer.byteLength(parameters) <= limitBytes / 2
  const shown = keepParameters ? (input.body === undefined ? 'null' : json(input.body)) : whole
  const bodyType = input.bodyType === undefined ? '' : `,"bodyType":${JSON.stringify(input.bodyType)}`
  const rest = (keepParameters ? parameters : '"path":{},"query":{},"headers":{}') + bodyType
  const frame = `{"body":,${rest},"cut":true}`
  const body = cutJsonString(shown, limitBytes - Buffer.byteLength(frame), inputCutMarker(limitBytes))
  return `{"body":${body},${rest},"cut":true}`
}

/**
 * A JSON string literal of at most `budgetBytes`: a prefix of `text`, then `… marker`. Escaping can
 * make the literal longer than the prefix, so the prefix shrinks until it fits (two or three tries).
 */
function cutJsonString(text: string, budgetBytes: number, marker: string): string {
  let chars = Math.min(text.length, Math.max(0, budgetBytes))
  for (;;) {
    // Never end on the first half of a surrogate pair: a lone half cannot be stored (PostgreSQL).
    const code = text.charCodeAt(chars - 1)
    const end = code >= 0xd800 && code <= 0xdbff ? chars - 1 : chars
    const literal = JSON.stringify(`${text.slice(0, end)}… ${marker}`)
    const bytes = Buffer.byteLength(literal)
    if (bytes <= budgetBytes || end <= 0) return literal
    chars = Math.min(end - 1, Math.floor((end * budgetBytes) / bytes) - 8)
    if (chars < 0) chars = 0
  }
}

/**
 * Sub-flow calls as JSON, up to the cut: calls after it are left out, since their steps would only
 * show the marker (an each of 10,000 calls would otherwise write ~700,000 marker steps, 100 MB).
 */
function callsJson(calls: NonNullable<TraceStep['calls']>, state: CapState): string {
  const parts: string[] = []
  for (const call of calls) {
    if (state.cut) break
    parts.push(`{"flow":${JSON.stringify(call.flow)},"steps":${stepsJson(call.steps, state)}}`)
  }
  return parts.join(',')
}

interface CapState {
  budget: number
  cut: boolean
  traceBytes: number
  secrets: Secrets
  /** Values known to hold no secret (see runDetailsText). */
  clean?: WeakSet<object>
}

/** Steps as JSON, sub-flow steps nested under their calling step; outputs share one byte budget. */
function stepsJson(steps: TraceStep[], state: CapState): string {
  const parts: string[] = []
  for (const step of steps) {
    let output: string
    if (state.cut) output = JSON.stringify(cutMarker(state.traceBytes))
    else {
      const known = typeof step.output === 'object' && step.output !== null && state.clean?.has(step.output)
      output = known ? JSON.stringify(step.output) : maskedJson(step.output, state.secrets)
      const bytes = Buffer.byteLength(output)
      if (bytes > state.budget) {
        state.cut = true
        // A prefix of the output's JSON, cut at a character boundary within the bytes left, then the marker.
        output = JSON.stringify(
          `${Buffer.from(output)
            .subarray(0, Math.max(0, state.budget))
            .toString('utf8')
            .replace(/\uFFFD+$/, '')}… ${cutMarker(state.traceBytes)}`,
        )
      } else state.budget -= bytes
    }
    const attempt = step.attempt === undefined ? '' : `,"attempt":${step.attempt}`
    const reused = step.reused ? ',"reused":true' : ''
    const calls = step.calls && !state.cut ? `,"calls":[${callsJson(step.calls, state)}]` : ''
    parts.push(
      `{"nodeId":${JSON.stringify(step.nodeId)},"type":${JSON.stringify(step.type)},"name":${JSON.stringify(step.name)},` +
        `"port":${JSON.stringify(step.port)},"durationMs":${step.durationMs},"output":${output}${attempt}${reused}${calls}}`,
    )
  }
  return `[${parts.join(',')}]`
}
