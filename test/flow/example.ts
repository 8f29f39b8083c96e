// The example project (fixtures/example), loaded by the real loader.
import { join } from 'node:path'
import { loadProject } from '../../src/project/load.js'
import type { Project, ProjectLimits } from '../../src/model/project.js'
import { ROOT } from '../helpers.js'

export const EXAMPLE_DIR = join(ROOT, 'fixtures', 'example')

/** The example project; `limits` overrides its limits (e.g. a short runTimeoutMs). */
export async function loadExample(limits: Partial<ProjectLimits> = {}): Promise<Project> {
  const project = await loadProject(EXAMPLE_DIR, { env: {} })
  const errors = project.problems.filter((problem) => problem.severity === 'error')
  if (errors.length) throw new Error(`the example project has problems: ${JSON.stringify(errors)}`)
  return { ...project, settings: { ...project.settings, limits: { ...project.settings.limits, ...limits } } }
}
