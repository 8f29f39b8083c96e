// SPEC §14's terminal lines: per failed run, which node failed and why (the reason is already
// masked and capped by the engine; every trigger of `serve` records through the workspace's store,
// so failed runs of the Run API, replays, the run form and ticks all show); per 400, its errors.
import { capErrorList } from '../flow/reason.js'
import type { AppContext } from './context.js'

export function logRunEvents(context: AppContext): () => void {
  return context.workspace.events.subscribe((event) => {
    if (event.type !== 'run' || event.data.status !== 'error') return
    const run = event.data
    context.log(`run ${run.id} ${run.projectId}/${run.flow} failed at node ${run.failedNodeId ?? '(none)'}: ${run.error ?? 'no reason given'}`)
  })
}

/** The terminal line of a 400: the error strings, never the values sent. */
export function logRejected(context: AppContext, projectId: string, slug: string, errors: string[]): void {
  context.log(`400 ${projectId}/${slug}: ${capErrorList(errors).join('; ')}`)
}
