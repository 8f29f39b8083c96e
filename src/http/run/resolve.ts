// Step 1 of the Run API (SPEC §5.1): the project and flow the path names, or 404 `flow not found`
// (unknown project or flow, a flow without an HTTP Start, a path with the wrong number of
// parameters). From here on, the request's refusals count for its project on /status.
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { Flow, Project, StartInfo } from '../../model/project.js'
import { clientIp, isLoopback } from '../client.js'
import type { AppContext } from '../context.js'
import { countRejections } from '../rejections.js'
import { parseRunPath, type RunPath } from '../run-path.js'

/** What the path resolved to: every later step reads it. */
export interface RunTarget {
  path: RunPath
  project: Project
  flow: Flow
  start: StartInfo
}

export function resolveFlow(context: AppContext, event: H3Event): RunTarget {
  const path = parseRunPath(event.url.pathname)
  const entry = path ? context.workspace.get(path.projectId) : undefined
  countRejections(event, entry ? entry.project.settings.projectId : null)
  if (!path || !entry) throw httpError('FLOW_NOT_FOUND')
  const { project } = entry
  const flow = project.flows.get(path.slug)
  const start = flow?.start
  if (!flow || !start || !start.http || start.pathParams.length !== path.params.length) {
    // A flow whose file failed to load is named to local callers (as /status does), beside the spec's body.
    const hint = flow ? undefined : isLoopback(clientIp(event, context.options)) ? brokenFlowHint(project, path.slug) : undefined
    throw httpError('FLOW_NOT_FOUND', undefined, hint ? { fields: { hint } } : {})
  }
  return { path, project, flow, start }
}

/**
 * When a flow file of this slug failed to load: a hint naming the file and where its problems are
 * shown. The slug of a broken file is not known for sure, so the file name decides.
 */
function brokenFlowHint(project: Project, slug: string): string | undefined {
  const loaded = new Set([...project.flows.values()].map((flow) => flow.file))
  const broken = project.problems.find((problem) => {
    if (problem.severity !== 'error' || loaded.has(problem.file)) return false
    const base = problem.file
      .split('/')
      .at(-1)!
      .replace(/\.(ya?ml|json)$/i, '')
    return base.toLowerCase() === slug.toLowerCase()
  })
  if (!broken) return undefined
  return `${broken.file} has load errors, so its flow is not served; see /status or run flowctl validate`
}
