// SPEC §14's terminal line per failed run: which node failed and why (the reason is already
// masked and capped by the engine). Every trigger of `serve` records through the workspace's
// store, so failed runs of the Run API, replays, the run form and ticks all show.
import type { AppContext } from './context.js'

export function logRunEvents(context: AppContext): () => void {
  return context.workspace.events.subscribe((event) => {
    if (event.type !== 'run' || event.data.status !== 'error') return
    const run = event.data
    context.log(`run ${run.id} ${run.projectId}/${run.flow} failed at node ${run.failedNodeId ?? '(none)'}: ${run.error ?? 'no reason given'}`)
  })
}
