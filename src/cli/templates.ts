// `flowctl init`: copies a folder of templates/ and fills in the project id and name.
// Files named `gitignore` become `.gitignore` (npm drops .gitignore files when publishing); likewise `env.example`.
import { access, copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { basename, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FlowctlError } from '../errors.js'
import { slugify } from '../project/slug.js'

const TEMPLATES_DIR = fileURLToPath(new URL('../../templates/', import.meta.url))
const PLACEHOLDER_FILES = /\.(ya?ml|json|md)$/

export async function listTemplates(): Promise<string[]> {
  const entries = await readdir(TEMPLATES_DIR, { withFileTypes: true })
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort()
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort()
}

export async function createProjectFromTemplate(
  target: string,
  template: string,
  options: { projectId?: string; name?: string },
): Promise<{ projectId: string; files: string[] }> {
  if (await exists(join(target, 'flowctl.yaml'))) {
    throw new FlowctlError('USAGE', `${target} already has a flowctl.yaml; choose an empty folder`)
  }
  const folderName = basename(target)
  const projectId = options.projectId ?? (slugify(folderName) || 'my-project')
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(projectId)) {
    throw new FlowctlError('USAGE', `project id "${projectId}" must match [a-z0-9][a-z0-9_-]* (use --id)`)
  }
  const name = options.name ?? folderName.replace(/[-_]+/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase())
  const source = join(TEMPLATES_DIR, template)
  const written: string[] = []
  for (const file of await listFiles(source)) {
    const targetName = file.replace(/(^|\/)(gitignore|env\.example)$/, '$1.$2')
    const destination = join(target, targetName)
    if (await exists(destination)) throw new FlowctlError('USAGE', `${targetName} already exists in ${target}; nothing was written`)
    written.push(targetName)
  }
  for (const [index, file] of (await listFiles(source)).entries()) {
    const destination = join(target, written[index] as string)
    await mkdir(join(destination, '..'), { recursive: true })
    if (PLACEHOLDER_FILES.test(file)) {
      const text = await readFile(join(source, file), 'utf8')
      await writeFile(destination, text.replaceAll('__PROJECT_ID__', projectId).replaceAll('__PROJECT_NAME__', JSON.stringify(name).slice(1, -1)))
    } else {
      await copyFile(join(source, file), destination)
    }
  }
  return { projectId, files: written }
}
