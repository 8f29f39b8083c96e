// Flow files as the flows API reads and writes them: found by slug (never by a path from the
// request: a slug is checked to be a slug, and only names read from the flows folder or built as
// `<slug>.<ext>` are opened), versioned by the sha256 of their text, written atomically (a hidden
// temporary file in the same folder, then a rename) one write at a time per file.
import { createHash } from 'node:crypto'
import { link, lstat, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path'
import { temporaryPathBeside } from '../../internal/ids.js'
import type { Project } from '../../model/project.js'
import { FLOW_FILE_EXTENSIONS, isFlowFileName } from '../flow-file.js'
import { slugify } from '../slug.js'
import { flowDataOf } from './edit-text.js'

/** A flow file of a project: its path relative to the project folder (as problems name it) and absolute. */
export interface FlowFileRef {
  file: string
  path: string
}

/** At most this long: a slug is a URL segment and a file name. */
const MAX_SLUG_LENGTH = 200

/** `create-order`: lower-case letters and digits in runs joined by single hyphens. */
export function isSlug(value: string): boolean {
  return value.length > 0 && value.length <= MAX_SLUG_LENGTH && slugify(value) === value
}

/** The version the API names a text by: sha256, hex. */
export function textVersion(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

export function flowsFolderOf(project: Project): string {
  return resolve(project.dir, project.settings.flows)
}

function refOf(project: Project, path: string): FlowFileRef {
  return { file: relative(project.dir, path).split(sep).join('/'), path }
}

/** Where a new flow with this slug is written: `<flows>/<slug>.yaml`. */
export function newFlowFileRef(project: Project, slug: string): FlowFileRef {
  return refOf(project, join(flowsFolderOf(project), `${slug}.yaml`))
}

/** The slug a flow file's text gives (its `name`, else its file name), as the loader reads it. */
export function slugOfText(file: string, text: string): string {
  const data = flowDataOf(file, text)
  const name = data !== null && typeof data === 'object' && typeof (data as { name?: unknown }).name === 'string' ? (data as { name: string }).name : ''
  return slugify(name !== '' ? name : basename(file, extname(file)))
}

/**
 * The file of the flow with this slug: the loaded flow's file, a file named after the slug, then
 * every flow file of the folder (a file that never loaded has no flow, yet can be edited).
 */
export async function findFlowFile(project: Project, slug: string): Promise<FlowFileRef | null> {
  if (!isSlug(slug)) return null
  const folder = flowsFolderOf(project)
  const loaded = project.flows.get(slug)
  const candidates = [...(loaded ? [resolve(project.dir, loaded.file)] : []), ...FLOW_FILE_EXTENSIONS.map((ext) => join(folder, slug + ext))]
  for (const path of candidates) if (await hasSlug(path, folder, slug)) return refOf(project, path)
  let names: string[]
  try {
    names = (await readdir(folder)).filter(isFlowFileName).sort()
  } catch {
    return null
  }
  for (const name of names) {
    const path = join(folder, name)
    if (!candidates.includes(path) && (await hasSlug(path, folder, slug))) return refOf(project, path)
  }
  return null
}

async function hasSlug(path: string, folder: string, slug: string): Promise<boolean> {
  if (dirname(path) !== folder) return false
  const text = await readFlowText(path)
  return text !== null && slugOfText(path, text) === slug
}

/** The text of a flow file, or null when it is not there (or not a file). */
export async function readFlowText(path: string): Promise<string | null> {
  try {
    if (!(await stat(path)).isFile()) return null
    return await readFile(path, 'utf8')
  } catch (error) {
    if (isMissing(error)) return null
    throw error
  }
}

/** Whether any flow file of the folder is called after the slug (`<slug>.yaml`, `.yml`, `.json`). */
export async function slugFileExists(project: Project, slug: string): Promise<boolean> {
  const folder = flowsFolderOf(project)
  for (const ext of FLOW_FILE_EXTENSIONS) {
    try {
      await lstat(join(folder, slug + ext))
      return true
    } catch (error) {
      if (!isMissing(error)) throw error
    }
  }
  return false
}

/**
 * Writes `text` to `path` atomically: a hidden temporary file beside it (the watcher ignores hidden
 * names), flushed, then renamed over the file (it keeps the file's mode). With `exclusive`, the
 * file must not exist yet: the temporary file is linked to its name, which fails if it is taken.
 */
export async function writeFlowFile(path: string, text: string, options: { exclusive?: boolean } = {}): Promise<void> {
  const temporary = temporaryPathBeside(path)
  const mode = options.exclusive
    ? 0o644
    : await stat(path).then(
        (s) => s.mode & 0o777,
        () => 0o644,
      )
  const handle = await open(temporary, 'wx', mode)
  try {
    await handle.writeFile(text, 'utf8')
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    if (options.exclusive) await link(temporary, path)
    else await rename(temporary, path)
  } finally {
    await rm(temporary, { force: true })
  }
}

export async function removeFlowFile(path: string): Promise<void> {
  await rm(path)
}

const queues = new Map<string, Promise<unknown>>()

/** Runs `work` after every earlier work on the same file has finished (a version check and its write are one step). */
export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(path) ?? Promise.resolve()
  const current = previous.then(work, work)
  const settled = current.catch(() => undefined)
  queues.set(path, settled)
  try {
    return await current
  } finally {
    if (queues.get(path) === settled) queues.delete(path)
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
