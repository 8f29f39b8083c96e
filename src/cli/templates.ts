// `flowctl init`: copies a folder of templates/ and fills in the project id and name.
// Files named `gitignore` become `.gitignore` (npm drops .gitignore files when publishing); likewise `env.example`.
// It adds to an existing folder: a file that is already there is kept as it is (a .gitignore gets the
// template's missing lines appended); only an existing flowctl.yaml stops it.
import { access, appendFile, copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { FlowctlError } from '../errors.js'
import { slugify } from '../project/slug.js'

const TEMPLATES_DIR = fileURLToPath(new URL('../../templates/', import.meta.url))
const SCHEMA_DIR = fileURLToPath(new URL('../../schema/', import.meta.url))
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

/** The folder of flowctl's JSON schemas, at or above `target`, that everyone who clones the project has
 * after `npm install`: `<dir>/node_modules/flowctl/schema` of the nearest folder whose package.json
 * lists flowctl, or that has flowctl installed. Null when there is none. */
async function projectSchemaDir(target: string): Promise<string | null> {
  for (let dir = resolve(target); ; dir = dirname(dir)) {
    const installed = join(dir, 'node_modules', 'flowctl')
    if ((await listsFlowctl(join(dir, 'package.json'))) || (await exists(join(installed, 'package.json')))) return join(installed, 'schema')
    if (dirname(dir) === dir) return null
  }
}

async function listsFlowctl(packageFile: string): Promise<boolean> {
  try {
    const pkg = JSON.parse(await readFile(packageFile, 'utf8')) as Record<string, unknown>
    return ['devDependencies', 'dependencies'].some((field) => {
      const deps = pkg[field]
      return typeof deps === 'object' && deps !== null && 'flowctl' in deps
    })
  } catch {
    return false
  }
}

/**
 * The `$schema` a file in `fileDir` should name for `schemaFile`: a relative path when the file is
 * inside the project (the schema of flowctl as a devDependency, or of a flowctl inside the project
 * folder), which resolves for everyone who clones it; otherwise a file URL that works on this
 * machine only (`portable: false`: init warns). Never a registry URL: flowctl is not published to one.
 */
function schemaReference(fileDir: string, schemaFile: string, projectDir: string): { reference: string; portable: boolean } {
  const inside = !relative(projectDir, schemaFile).startsWith('..') && !isAbsolute(relative(projectDir, schemaFile))
  if (inside) return { reference: relative(fileDir, schemaFile).split(sep).join('/'), portable: true }
  return { reference: pathToFileURL(schemaFile).href, portable: false }
}

/** The schema folder init links to, and whether the links work beyond this machine. */
async function schemaLinks(target: string): Promise<{ dir: string; root: string }> {
  const local = await projectSchemaDir(target)
  // A devDependency's folder: the relative link goes up to where node_modules sits.
  if (local) return { dir: local, root: dirname(dirname(dirname(local))) }
  return { dir: SCHEMA_DIR, root: target }
}

export interface InitResult {
  projectId: string
  /** Files written by init. */
  files: string[]
  /** Existing files init appended lines to (.gitignore). */
  merged: string[]
  /** Existing files init left as they were. */
  kept: string[]
  /** Files whose `$schema` link works on this machine only (a file URL). */
  machineSchemaLinks: string[]
}

/** Appends the template's lines that `existing` lacks; '' when nothing is missing. */
function missingLines(existing: string, template: string): string {
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
  const links = await schemaLinks(target)
  const linkFrom = (file: string, schema: string) => schemaReference(dirname(join(target, file)), join(links.dir, schema), links.root)
  const result: InitResult = { projectId, files: [], merged: [], kept: [], machineSchemaLinks: [] }
  for (const file of await listFiles(source)) {
    const targetName = file.replace(/(^|\/)(gitignore|env\.example)$/, '$1.$2')
    const destination = join(target, targetName)
    const fill = (text: string) => {
      const flowSchema = linkFrom(targetName, 'flow.schema.json')
      const testSchema = linkFrom(targetName, 'test.schema.json')
      const usesSchema = (text.includes('__FLOW_SCHEMA__') && !flowSchema.portable) || (text.includes('__TEST_SCHEMA__') && !testSchema.portable)
      if (usesSchema) result.machineSchemaLinks.push(targetName)
      return text
        .replaceAll('__PROJECT_ID__', projectId)
        .replaceAll('__PROJECT_NAME__', JSON.stringify(name).slice(1, -1))
        .replaceAll('__FLOW_SCHEMA__', flowSchema.reference)
        .replaceAll('__TEST_SCHEMA__', testSchema.reference)
    }
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
