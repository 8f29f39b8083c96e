// `flowctl init`: copies a folder of templates/ and fills in the project id and name.
// Files named `gitignore` become `.gitignore` (npm drops .gitignore files when publishing); likewise `env.example`.
// It adds to an existing folder: a file that is already there is kept as it is (a .gitignore gets the
// template's missing lines appended); only an existing flowctl.yaml stops it.
import { access, appendFile, copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { basename, isAbsolute, join, relative, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { FlowctlError } from '../errors.js'
import { slugify } from '../project/slug.js'

const TEMPLATES_DIR = fileURLToPath(new URL('../../templates/', import.meta.url))
const FLOW_SCHEMA = fileURLToPath(new URL('../../schema/flow.schema.json', import.meta.url))
const PLACEHOLDER_FILES = /\.(ya?ml|json|md)$/

export async function listTemplates(): Promise<string[]> {
  const entries = await readdir(TEMPLATES_DIR, { withFileTypes: true })
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort()
}

/**
 * The `$schema` a flow file in `flowsDir` should name: the flow schema of the flowctl that runs init.
 * Inside the project (flowctl a devDependency: `../node_modules/flowctl/...`) a relative path, which
 * works for everyone who clones the project; otherwise (a global install, a checkout) a file URL
 * that works on this machine.
 */
export function flowSchemaReference(flowsDir: string, schemaFile = FLOW_SCHEMA): string {
  const path = relative(flowsDir, schemaFile)
  const insideProject = !isAbsolute(path) && path.split(sep).filter((part) => part === '..').length <= 1
  return insideProject ? path.split(sep).join('/') : pathToFileURL(schemaFile).href
}

export interface InitResult {
  projectId: string
  /** Files written by init. */
  files: string[]
  /** Existing files init appended lines to (.gitignore). */
  merged: string[]
  /** Existing files init left as they were. */
  kept: string[]
}

/** Appends the template's lines that `existing` lacks; '' when nothing is missing. */
export function missingLines(existing: string, template: string): string {
  const present = new Set(existing.split(/\r?\n/).map((line) => line.trim()))
  const missing = template.split(/\r?\n/).filter((line) => line.trim() !== '' && !present.has(line.trim()))
  if (!missing.length) return ''
  const separator = existing === '' || existing.endsWith('\n') ? '' : '\n'
  return `${separator}# flowctl\n${missing.join('\n')}\n`
}

export async function createProjectFromTemplate(target: string, template: string, options: { projectId?: string; name?: string }): Promise<InitResult> {
  if (await exists(join(target, 'flowctl.yaml'))) {
    throw new FlowctlError('CONFLICT', `${target} already has a flowctl.yaml; nothing was written`)
  }
  const folderName = basename(target)
  const projectId = options.projectId ?? (slugify(folderName) || 'my-project')
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(projectId)) {
    throw new FlowctlError('USAGE', `project id "${projectId}" must match [a-z0-9][a-z0-9_-]* (use --id)`)
  }
  const name = options.name ?? folderName.replace(/[-_]+/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase())
  const source = join(TEMPLATES_DIR, template)
  const schemaReference = flowSchemaReference(join(target, 'flows'))
  const result: InitResult = { projectId, files: [], merged: [], kept: [] }
  for (const file of await listFiles(source)) {
    const targetName = file.replace(/(^|\/)(gitignore|env\.example)$/, '$1.$2')
    const destination = join(target, targetName)
    const fill = (text: string) =>
      text
        .replaceAll('__PROJECT_ID__', projectId)
        .replaceAll('__PROJECT_NAME__', JSON.stringify(name).slice(1, -1))
        .replaceAll('__FLOW_SCHEMA__', schemaReference)
    if (await exists(destination)) {
      const lines = targetName === '.gitignore' ? missingLines(await readFile(destination, 'utf8'), await readFile(join(source, file), 'utf8')) : ''
      if (lines) {
        await appendFile(destination, lines)
        result.merged.push(targetName)
      } else result.kept.push(targetName)
      continue
    }
    await mkdir(join(destination, '..'), { recursive: true })
    if (PLACEHOLDER_FILES.test(file)) await writeFile(destination, fill(await readFile(join(source, file), 'utf8')))
    else await copyFile(join(source, file), destination)
    result.files.push(targetName)
  }
  return result
}
