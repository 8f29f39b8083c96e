// One scheduler tick over every project of the workspace (the tick route and `serve --cron`).
import { runTick, type TickSummary } from '../schedule/tick.js'
import type { Project } from '../model/project.js'
import type { Store } from '../model/store.js'
import type { Workspace } from './workspace.js'

/** Runs the tick for every project whose store is open; a project without one makes `ok` false. */
export async function tickWorkspace(workspace: Workspace, at: Date, log?: (line: string) => void): Promise<TickSummary> {
  const targets: { project: Project; store: Store }[] = []
  let unavailable = 0
  for (const entry of workspace.list()) {
    const store = await workspace.storeFor(entry.project.settings.projectId)
    if (store) targets.push({ project: entry.project, store })
    else unavailable++
  }
  const ticked = await runTick({ targets, at, index: workspace.dueIndex, log })
  const summary = unavailable > 0 ? { ...ticked, ok: false } : ticked
  workspace.events.publish({ type: 'tick', projectId: null, data: { ...summary } })
  return summary
}
