// The acknowledgement of an async run (SPEC §12, `respond: async` on a Start): after the rate limit,
// auth and the body checks of the Run API, the inputs are validated (400 as for any run), the run is
// committed to the store's queue, and only then is 202 `{ ok: true, runId, status: "queued" }` sent
// with `Location: /api/result/<projectId>/<runId>`. The background workers (async-runner.ts) run it.
import type { H3Event } from 'h3'
import { httpError } from '../errors.js'
import { newRunId } from '../flow/engine.js'
import { validateInputs } from '../flow/inputs.js'
import type { RunInput } from '../model/run.js'
import type { Flow, Project } from '../model/project.js'
import type { Store } from '../model/store.js'
import type { AppContext } from './context.js'
import { sendJson, type HeaderPairs } from './respond.js'
import { logRejected } from './run-log.js'

export interface AsyncRequest {
  project: Project
  flow: Flow
  store: Store
  /** The request's method in upper case. */
  method: string
  input: RunInput
  /** CORS answer headers for this request, when the flow has CORS settings. */
  cors: HeaderPairs | undefined
}

/** The result route of a run. */
function resultPath(projectId: string, runId: string): string {
  return `/api/result/${projectId}/${runId}`
}

export async function acceptAsyncRun(context: AppContext, event: H3Event, request: AsyncRequest): Promise<string> {
  const { project, flow, store, input } = request
  const projectId = project.settings.projectId
  // Checked now, so a bad request gets its 400 rather than a 202 for a run that cannot start.
  const checked = validateInputs(flow, input)
  if (!checked.ok) {
    logRejected(context, projectId, flow.slug, checked.errors)
    throw httpError('INPUT_INVALID', checked.errors)
  }
  const runId = newRunId()
  // The raw inputs: the run validates (and coerces) them again when it starts, as any run does.
  // A store outage throws STORE_UNAVAILABLE, which onError answers 503.
  await store.queue.enqueue({
    id: runId,
    projectId,
    flow: flow.slug,
    method: request.method,
    input: JSON.stringify(input),
    receivedAt: new Date().toISOString(),
  })
  context.options.asyncQueued?.(projectId)
  const location = resultPath(projectId, runId)
  // request.cors already exposes X-Run-Id and Location (cors.ts).
  return sendJson(event, 202, { ok: true, runId, status: 'queued' }, { ...request.cors, location, 'x-run-id': runId })
}
