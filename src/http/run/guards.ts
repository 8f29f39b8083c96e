// Step 7 of the Run API: the project's store (503 when it cannot be opened) and the guards of SPEC
// §12 around the call (run-guards.ts): the idempotency key per caller (a replay of the stored
// answer, 409 while the first runs, 422 for another body; SPEC §19), then a concurrency slot (429
// `flow busy`, or a wait). An async Start takes no slot here: its worker does.
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { Project } from '../../model/project.js'
import type { Store } from '../../model/store.js'
import type { AppContext } from '../context.js'
import { enterRunGuards, type GuardEntry } from '../run-guards.js'
import { noteStoreOutage } from '../store-outage.js'
import type { RunCall } from './input.js'

/** The open store of the project (the common case, no promise made), else an attempt to open it; 503 without one. */
export function openRunStore(context: AppContext, project: Project): Store | Promise<Store> {
  const open = context.workspace.get(project.settings.projectId)?.store
  return open ?? reopenStore(context, project)
}

async function reopenStore(context: AppContext, project: Project): Promise<Store> {
  const projectId = project.settings.projectId
  const store = await context.workspace.storeFor(projectId)
  if (store) return store
  noteStoreOutage(context, project, context.workspace.get(projectId)?.storeError ?? 'not open')
  throw httpError('STORE_UNAVAILABLE')
}

export function enterGuards(context: AppContext, event: H3Event, call: RunCall): Promise<GuardEntry> {
  const { project, flow, start } = call.target
  const async = start.respond === 'async'
  return enterRunGuards(event, {
    store: call.store,
    project,
    flow,
    start,
    method: call.method,
    body: call.input.body,
    headerInputs: call.input.headers!,
    cors: call.cors.answer,
    signal: context.options.signal,
    concurrency: !async,
  })
}
