// What history keeps of a run beside its record (SPEC §14): the validated input and the trace, as
// JSON text made once here, with secrets shown as `***` and step outputs capped at
// `limits.traceBytes` per run. The stores write the text as it is.
import type { HistoryKeep, Secrets } from '../model/project.js'
import type { RunDetailsText } from '../model/store.js'
import type { ValidatedInput } from './inputs.js'
import { maskedJson } from './mask.js'
import type { TraceStep } from '../model/run.js'

/** Whether a run with this outcome keeps its input and trace. */
export function keepsDetails(keep: HistoryKeep, failed: boolean): boolean {
  return keep === 'all' || (keep === 'failed' && failed)
}

/** The marker that replaces outputs past the cap (the step that crosses it keeps a prefix before it). */
export function cutMarker(traceBytes: number): string {
  return `[cut: this run's trace passed limits.traceBytes (${traceBytes} bytes)]`
}

export interface DetailsSource {
  input: ValidatedInput | null
  runId: string
  durationMs: number
  /** Steps with their raw outputs (not masked yet). */
  steps: TraceStep[]
  secrets: Secrets
  traceBytes: number
}

export function runDetailsText(source: DetailsSource): RunDetailsText {
  const { secrets } = source
  const input = source.input === null ? null : maskedJson(source.input, secrets)
  const state = { budget: source.traceBytes, cut: false, traceBytes: source.traceBytes, secrets }
  const steps = stepsJson(source.steps, state)
  const trace = `{"runId":${JSON.stringify(source.runId)},"durationMs":${source.durationMs},"steps":${steps},"cut":${state.cut}}`
  return { input, trace }
}

interface CapState {
  budget: number
  cut: boolean
  traceBytes: number
  secrets: Secrets
}

/** Steps as JSON, sub-flow steps nested under their calling step; outputs share one byte budget. */
function stepsJson(steps: TraceStep[], state: CapState): string {
  const parts: string[] = []
  for (const step of steps) {
    let output: string
    if (state.cut) output = JSON.stringify(cutMarker(state.traceBytes))
    else {
      output = maskedJson(step.output, state.secrets)
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
    const calls = step.calls
      ? `,"calls":[${step.calls.map((call) => `{"flow":${JSON.stringify(call.flow)},"steps":${stepsJson(call.steps, state)}}`).join(',')}]`
      : ''
    parts.push(
      `{"nodeId":${JSON.stringify(step.nodeId)},"type":${JSON.stringify(step.type)},"name":${JSON.stringify(step.name)},` +
        `"port":${JSON.stringify(step.port)},"durationMs":${step.durationMs},"output":${output}${attempt}${calls}}`,
    )
  }
  return `[${parts.join(',')}]`
}
