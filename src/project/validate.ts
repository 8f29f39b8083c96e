// `flowctl validate`: every problem of flowctl.yaml and of every flow file, at once.
import { readProject } from './load.js'
import type { Problem } from '../model/project.js'

export interface ValidationResult {
  /** True when no problem is an error (warnings do not fail). */
  ok: boolean
  /** Sorted by file, line and column. */
  problems: Problem[]
  /** How many flow files were checked. */
  flows: number
}

/** Throws FlowctlError('PROJECT_NOT_FOUND') when `dir` has no flowctl.yaml. */
export async function validateProject(dir: string, options: { env?: NodeJS.ProcessEnv } = {}): Promise<ValidationResult> {
  const { project, flowFiles } = await readProject(dir, options)
  return { ok: !project.problems.some((p) => p.severity === 'error'), problems: project.problems, flows: flowFiles }
}
