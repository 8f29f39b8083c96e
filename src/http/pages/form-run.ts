// The run form of the flow page (`POST /flows/<projectId>/<slug>`): form fields named
// `path.<name>`, `query.<name>`, `headers.<name>` and `body` (JSON text) become a run through the
// one engine, with a trace. Empty fields are left out, as an HTTP caller would leave them out.
import { answerOutcome } from '../../flow/answer.js'
import { capErrorList } from '../../flow/reason.js'
import { runFlow } from '../../flow/engine.js'
import type { RunOutcome, Trace } from '../../model/run.js'
import type { Flow, Project } from '../../model/project.js'
import type { Store } from '../../model/store.js'

export interface FormRunAnswer {
  projectId: string
  status: number
  runId: string | null
  body?: unknown
  errors?: string[]
  failedNodeId?: string | null
  trace?: Trace
}

/** The form's fields; `body` keeps its text so the form can be shown again as it was. */
export function readFormFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(text)) {
    if (name === 'body' || /^(path|query|headers)\.[^.]/.test(name))
      Object.defineProperty(fields, name, { value, enumerable: true, writable: true, configurable: true })
  }
  return fields
}

export async function runFromForm(options: {
  project: Project
  flow: Flow
  store: Store
  fields: Record<string, string>
  signal?: AbortSignal
}): Promise<FormRunAnswer> {
  const { project, flow, fields } = options
  const projectId = project.settings.projectId
  const input = { path: {} as Record<string, string>, query: {} as Record<string, string>, headers: {} as Record<string, string> }
  let body: unknown
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'body') {
      if (value.trim() === '') continue
      try {
        body = JSON.parse(value)
      } catch (error) {
        return formAnswer(projectId, { kind: 'invalid', errors: [`body: not valid JSON (${(error as Error).message})`] })
      }
      continue
    }
    if (value === '') continue
    const dot = name.indexOf('.')
    const location = name.slice(0, dot) as 'path' | 'query' | 'headers'
    const key = location === 'headers' ? name.slice(dot + 1).toLowerCase() : name.slice(dot + 1)
    Object.defineProperty(input[location], key, { value, enumerable: true, writable: true, configurable: true })
  }
  const method = flow.start ? flow.start.method.toUpperCase() : 'POST'
  const outcome = await runFlow({
    project,
    flow,
    store: options.store,
    trigger: 'http',
    method,
    input: { ...input, body },
    trace: true,
    signal: options.signal,
  })
  return formAnswer(projectId, outcome)
}

/** What an HTTP caller would get (answerOutcome), and a failure's reason (its error's message) too. */
function formAnswer(projectId: string, outcome: RunOutcome): FormRunAnswer {
  const answer = answerOutcome(outcome)
  const runId = outcome.kind === 'invalid' ? null : outcome.runId
  const trace = outcome.kind === 'invalid' ? undefined : outcome.trace
  if (answer.error) {
    const errors = answer.error.code === 'INPUT_INVALID' ? capErrorList(answer.error.errors) : [answer.error.message]
    return { projectId, status: answer.status, runId, errors, failedNodeId: outcome.kind === 'failed' ? outcome.nodeId : undefined, trace }
  }
  return { projectId, status: answer.status, runId, body: answer.body ?? null, failedNodeId: null, trace }
}
