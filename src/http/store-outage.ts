// Why runs answer 503: one log line when a project's store becomes unavailable (with its cause,
// secrets and URL passwords masked), one when it answers again. Not one line per request: an
// outage under load would otherwise flood the terminal. Only a run that began after the outage was
// logged may log it back: under load, runs already in flight finish either way around an outage, and
// letting them log would make the two lines alternate (back, unavailable, back...).
import type { Project } from '../model/project.js'
import type { AppContext } from './context.js'
import { describeStoreError } from '../serve/workspace.js'

/** Per project whose outage was logged: when it was logged (`performance.now()`). */
const downByContext = new WeakMap<AppContext, Map<string, number>>()

function downProjects(context: AppContext): Map<string, number> {
  let down = downByContext.get(context)
  if (!down) downByContext.set(context, (down = new Map()))
  return down
}

/** Notes a 503 for `project`; logs the cause the first time. `cause` is an error or a message already masked. */
export function noteStoreOutage(context: AppContext, project: Project, cause: unknown): void {
  const projectId = project.settings.projectId
  const down = downProjects(context)
  if (down.has(projectId)) return
  down.set(projectId, performance.now())
  context.log(`store of project ${projectId} is unavailable, so its runs answer 503 until it is back: ${reasonOf(cause, project)}`, true)
}

/**
 * Notes that the project's store answered a run that began at `startedAt` (`performance.now()`);
 * logs the recovery after an outage, but only for a run that began after the outage was logged: one
 * already in flight proves nothing about the store now.
 */
export function noteStoreBack(context: AppContext, projectId: string, startedAt: number): void {
  const down = downByContext.get(context)
  const loggedAt = down?.get(projectId)
  if (!down || loggedAt === undefined || startedAt <= loggedAt) return
  down.delete(projectId)
  context.log(`store of project ${projectId} is back; runs are recorded again`, true)
}

/** The deepest message in the cause chain: the store's own words, not the wrapper's. */
function reasonOf(cause: unknown, project: Project): string {
  if (typeof cause === 'string') return describeStoreError(cause, project)
  let deepest: unknown = cause
  for (let e = cause, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) deepest = e
  return describeStoreError(deepest, project)
}
