// Why runs answer 503: one log line when a project's store becomes unavailable (with its cause,
// secrets and URL passwords masked), one when it answers again. Not one line per request: an
// outage under load would otherwise flood the terminal.
import type { Project } from '../model/project.js'
import type { AppContext } from './context.js'
import { describeStoreError } from '../serve/workspace.js'

const downByContext = new WeakMap<AppContext, Set<string>>()

function downSet(context: AppContext): Set<string> {
  let down = downByContext.get(context)
  if (!down) downByContext.set(context, (down = new Set()))
  return down
}

/** Notes a 503 for `project`; logs the cause the first time. `cause` is an error or a message already masked. */
export function noteStoreOutage(context: AppContext, project: Project, cause: unknown): void {
  const projectId = project.settings.projectId
  const down = downSet(context)
  if (down.has(projectId)) return
  down.add(projectId)
  context.log(`store of project ${projectId} is unavailable, so its runs answer 503 until it is back: ${reasonOf(cause, project)}`, true)
}

/** Notes that the project's store answered; logs the recovery after an outage. */
export function noteStoreBack(context: AppContext, projectId: string): void {
  const down = downByContext.get(context)
  if (!down?.delete(projectId)) return
  context.log(`store of project ${projectId} is back; runs are recorded again`, true)
}

/** The deepest message in the cause chain: the store's own words, not the wrapper's. */
function reasonOf(cause: unknown, project: Project): string {
  if (typeof cause === 'string') return describeStoreError(cause, project)
  let deepest: unknown = cause
  for (let e = cause, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) deepest = e
  return describeStoreError(deepest, project)
}
