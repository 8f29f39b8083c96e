// Replay (SPEC §14): the recorded input of a run, through the flow's current version, as a new run
// whose record says `replayOf`. Shared by `flowctl run --replay` and `POST /api/replay`. With
// `from: 'failed'` (SPEC §22) the new run reuses the stored outputs of the steps before the failed
// node and executes from it (resume-from.ts); its record also says `resumedFrom`.
import { FlowctlError } from '../errors.js'
import type { Flow, Project } from '../model/project.js'
import type { RunTrigger, Store, StoredInput } from '../model/store.js'
import { runFlow } from './engine.js'
import { resumePointOf } from './resume-from.js'
import type { RunInput, RunOutcome } from '../model/run.js'

/** The codes `replayRun` throws for a run that cannot be replayed; their messages say why and may be shown. */
const REPLAY_REFUSALS: ReadonlySet<string> = new Set(['RUN_NOT_FOUND', 'FLOW_NOT_FOUND', 'REPLAY_UNAVAILABLE'])

/** Whether `error` is a refusal of `replayRun` (no such run, its flow removed, no input kept or a cut one, no failed step to retry) rather than a failure. */
export function isReplayRefusal(error: unknown): error is FlowctlError {
  return error instanceof FlowctlError && REPLAY_REFUSALS.has(error.code)
}

export interface ReplayOptions {
  project: Project
  store: Store
  runId: string
  trigger: RunTrigger
  /** `CLI` for the command line; the Start's method in capitals over HTTP when not given. */
  method?: string
  trace?: boolean
  signal?: AbortSignal
  /** `failed`: retry from the failed step instead of running the whole flow again. */
  from?: 'failed'
}

export interface Replay {
  flow: Flow
  outcome: RunOutcome
}

/** Throws RUN_NOT_FOUND, FLOW_NOT_FOUND or REPLAY_UNAVAILABLE with a message for the user. */
export async function replayRun(options: ReplayOptions): Promise<Replay> {
  const { project, store, runId } = options
  const projectId = project.settings.projectId
  const original = await store.history.getRun(projectId, runId)
  if (!original) throw new FlowctlError('RUN_NOT_FOUND', `no run with id "${runId}" in project ${projectId}`)
  const flow = project.flows.get(original.flow)
  if (!flow?.start) throw new FlowctlError('FLOW_NOT_FOUND', `run ${runId} was a run of flow "${original.flow}", which the project no longer has`)
  if (!original.input) {
    throw new FlowctlError(
      'REPLAY_UNAVAILABLE',
      `run ${runId} kept no input (history.keep is "${project.settings.history.keep}", or the run is older than stored inputs), so it cannot be replayed`,
    )
  }
  if (original.input.cut) {
    throw new FlowctlError(
      'REPLAY_UNAVAILABLE',
      `run ${runId} had an input larger than limits.storedInputBytes, so history kept only its beginning and it cannot be replayed`,
    )
  }
  // Checked before anything runs: a refusal leaves no new record behind.
  const resume = options.from === 'failed' ? resumePointOf(original, flow) : undefined
  const outcome = await runFlow({
    project,
    flow,
    store,
    trigger: options.trigger,
    method: options.method ?? flow.start.method.toUpperCase(),
    input: replayInput(original.input),
    trace: options.trace,
    signal: options.signal,
    replayOf: runId,
    resume,
  })
  return { flow, outcome }
}

/** Stored values go back in as they were validated; path, query and header values as text again. */
function replayInput(input: StoredInput): RunInput {
  const text = (values: Record<string, unknown>) => {
    const out: Record<string, string | string[]> = {}
    for (const [name, value] of Object.entries(values ?? {})) {
      out[name] = Array.isArray(value) ? value.map(String) : typeof value === 'string' ? value : JSON.stringify(value)
    }
    return out
  }
  const headers = Object.fromEntries(Object.entries(text(input.headers)).map(([name, value]) => [name.toLowerCase(), String(value)]))
  const replayed: RunInput = { body: input.body, path: text(input.path) as Record<string, string>, query: text(input.query), headers }
  // A form or text body goes through the validation it first passed (form coercion, text schema).
  if (input.bodyType === 'form' || input.bodyType === 'text') replayed.bodyType = input.bodyType
  return replayed
}
