// A project written to a temp folder from YAML text and loaded by the real loader (edges such as
// onError's are made by the loader, so engine tests of them go through it).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadProject } from '../../src/project/load.js'
import type { Project } from '../../src/model/project.js'
import { makeTempDir } from '../helpers.js'

export async function projectFromText(
  flows: Record<string, string>,
  options: { settings?: string; env?: Record<string, string>; dotenv?: string } = {},
): Promise<Project> {
  const dir = await makeTempDir('flowctl-text-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), `projectId: text\nname: Text\n${options.settings ?? ''}`)
  if (options.dotenv) await writeFile(join(dir, '.env'), options.dotenv)
  for (const [name, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', `${name}.yaml`), text)
  const project = await loadProject(dir, { env: options.env ?? {} })
  const errors = project.problems.filter((problem) => problem.severity === 'error')
  if (errors.length) throw new Error(`the test project has problems: ${JSON.stringify(errors)}`)
  return project
}
