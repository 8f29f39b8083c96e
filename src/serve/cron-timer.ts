// `serve --cron`: one tick at every minute boundary (50 ms after it, so the minute has begun),
// for development without an external timer.
import { tickWorkspace } from './tick-workspace.js'
import type { Workspace } from './workspace.js'

/** Starts ticking; returns the function that stops it. */
export function startCronTimer(workspace: Workspace, log: (line: string) => void): () => void {
  let timer: NodeJS.Timeout | null = null
  let stopped = false
  const schedule = () => {
    const wait = 60_000 - (Date.now() % 60_000) + 50
    timer = setTimeout(async () => {
      if (stopped) return
      try {
        const summary = await tickWorkspace(workspace, new Date(), log)
        if (summary.ran > 0 || !summary.ok) {
          // Name what ran: project/flow, the minute (catch-up runs are for earlier ones) and the outcome.
          const runs = summary.runs.map((r) => `${r.projectId}/${r.flow}${r.catchUp ? ` (catch-up ${r.scheduledFor.slice(11, 16)}Z)` : ''} ${r.status}`)
          log(`tick ${summary.at}: ran ${summary.ran}, errors ${summary.errors}${runs.length ? `: ${runs.join(', ')}` : ''}`)
        }
      } catch (error) {
        log(`tick failed: ${error instanceof Error ? error.message : String(error)}`)
      }
      if (!stopped) schedule()
    }, wait)
  }
  schedule()
  return () => {
    stopped = true
    if (timer) clearTimeout(timer)
  }
}
