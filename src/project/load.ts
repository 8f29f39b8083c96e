// Loading a project: flowctl.yaml, the secrets, every flow file, then the checks across files.
// Reloading re-reads only the files that changed and keeps the last good version of a flow whose
// file became invalid (serve goes on serving it).
import { readFileSync } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { FlowctlError } from '../errors.js'
import { checkFlowFile, isFlowFileName, type FlowFileResult } from './flow-file.js'
import { startingFlowLoad } from './long-load.js'
import type { Flow, Problem, Project, Secrets } from '../model/project.js'
import { checkDatabaseSetting } from './check-database.js'
import { crossFileProblems } from './cross-file.js'
import { loadSecrets } from './secrets.js'
import { PROJECT_FILE, readProjectSettings, type SettingsResult } from './settings.js'
import { sortProblems } from './yaml-source.js'
import { compareText } from '../internal/compare.js'

interface LoadState {
  env: NodeJS.ProcessEnv
  settings: SettingsResult
  secrets: Secrets
  files: Map<string, FlowFileResult>
}

/** What a Project was built from, so a reload can reuse the unchanged files. */
const loadStates = new WeakMap<Project, LoadState>()

export interface LoadOptions {
  env?: NodeJS.ProcessEnv
}

/** The project and whether flowctl.yaml has errors; never throws for problems in files. */
export async function readProject(
  dir: string,
  options: LoadOptions = {},
  keep?: Project,
): Promise<{ project: Project; settingsInvalid: boolean; flowFiles: number }> {
  const root = resolve(dir)
  const env = options.env ?? process.env
  const settings = await readProjectSettings(root)
  const secrets = await loadSecrets(join(root, settings.settings.secrets), env)
  const databasePath =
    settings.source?.data && typeof (settings.source.data as Record<string, unknown>).database === 'object' ? ['database', 'url'] : ['database']
  checkDatabaseSetting(settings.settings.database, secrets, env, settings.collector, databasePath)
  const files = new Map<string, FlowFileResult>()
  const listed = await listFlowFiles(root, settings)
  startingFlowLoad(listed?.length ?? 0)
  // One synchronous read after the other: 10,000 concurrent promise-based reads (open, stat, read
  // and close, each a thread-pool round trip) cost about 0.1 ms more CPU per file and ~100 MB of
  // peak RSS than reading each file where it is checked (bench/results.md, stop 24).
  for (const file of listed ?? []) {
    const result = checkFlowText(file, readFlowText(root, file), settings, secrets)
    if (result) files.set(result.file, result)
  }
  const project = assemble(root, { env, settings, secrets, files }, keep, listed === null)
  return { project, settingsInvalid: settings.collector.hasErrors, flowFiles: listed?.length ?? 0 }
}

function throwIfInvalid(project: Project, settingsInvalid: boolean): Project {
  if (!settingsInvalid) return project
  const count = project.problems.filter((p) => p.file === PROJECT_FILE && p.severity === 'error').length
  throw new FlowctlError('PROJECT_INVALID', `${PROJECT_FILE} has ${count} problem${count === 1 ? '' : 's'}`, { problems: project.problems })
}

export async function loadProject(dir: string, options: LoadOptions = {}): Promise<Project> {
  const { project, settingsInvalid } = await readProject(dir, options)
  return throwIfInvalid(project, settingsInvalid)
}

/**
 * A new Project after the files in `changedPaths` (absolute; changed, added or deleted) changed.
 * flowctl.yaml or the dotenv file changing reloads everything. Throws PROJECT_INVALID when
 * flowctl.yaml became invalid (the caller keeps `previous`).
 */
export async function reloadProject(previous: Project, changedPaths: string[]): Promise<Project> {
  const state = loadStates.get(previous)
  const dir = previous.dir
  const flowsDir = resolve(dir, previous.settings.flows)
  const everything = [resolve(dir, PROJECT_FILE), resolve(dir, previous.settings.secrets), flowsDir]
  const changed = changedPaths.map((p) => resolve(dir, p))
  if (!state || changed.some((p) => everything.includes(p))) {
    const { project, settingsInvalid } = await readProject(dir, { env: state?.env }, previous)
    return throwIfInvalid(project, settingsInvalid)
  }
  const files = new Map(state.files)
  for (const path of changed) {
    if (dirname(path) !== flowsDir || !isFlowFileName(path)) continue
    const file = relative(dir, path).split(sep).join('/')
    const result = await readFlowFile(dir, file, state.settings, state.secrets)
    if (result) files.set(file, result)
    else files.delete(file)
  }
  return assemble(dir, { ...state, files }, previous, false)
}

/**
 * The problems of one flow file (relative path) as `flowctl validate` would report them if it held
 * `text`, the other files as `project` was loaded: for the flows API, before or without writing.
 */
export async function problemsWithText(project: Project, file: string, text: string): Promise<Problem[]> {
  let state = loadStates.get(project)
  if (!state) {
    const read = await readProject(project.dir)
    state = loadStates.get(read.project)!
  }
  const files = new Map(state.files)
  const result = checkFlowText(file, text, state.settings, state.secrets)
  if (result) files.set(file, result)
  const flowsDir = resolve(project.dir, state.settings.settings.flows)
  return assemble(project.dir, { ...state, files }, project, !(await isFolder(flowsDir))).problems.filter((problem) => problem.file === file)
}

async function isFolder(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false
}

/** Flow files directly in the flows folder, sorted; null when the folder does not exist. */
async function listFlowFiles(dir: string, settings: SettingsResult): Promise<string[] | null> {
  const folder = settings.settings.flows
  let names: string[]
  try {
    const entries = await readdir(resolve(dir, folder), { withFileTypes: true })
    names = entries.filter((e) => e.isFile() && isFlowFileName(e.name)).map((e) => e.name)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    throw error
  }
  return names.sort().map((name) =>
    relative(dir, resolve(dir, folder, name))
      .split(sep)
      .join('/'),
  )
}

/** Reads and checks one flow file; null when it does not exist (any more). */
async function readFlowFile(dir: string, file: string, settings: SettingsResult, secrets: Secrets): Promise<FlowFileResult | null> {
  let text: string
  try {
    text = await readFile(resolve(dir, file), 'utf8')
  } catch (error) {
    return missingFile(error)
  }
  return checkFlowText(file, text, settings, secrets)
}

function readFlowText(dir: string, file: string): string | null {
  try {
    return readFileSync(resolve(dir, file), 'utf8')
  } catch (error) {
    return missingFile(error)
  }
}

/** Null for a file that is gone (or became a folder) since it was listed; any other error is thrown. */
function missingFile(error: unknown): null {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT' || code === 'EISDIR') return null
  throw error
}

function checkFlowText(file: string, text: string | null, settings: SettingsResult, secrets: Secrets): FlowFileResult | null {
  if (text === null) return null
  const { timezone, secrets: secretsFile, cors } = settings.settings
  return checkFlowFile(file, text, { timezone, secrets, secretsFile, cors })
}

function assemble(dir: string, state: LoadState, keep: Project | undefined, flowsFolderMissing: boolean): Project {
  const results = [...state.files.values()].sort((a, b) => compareText(a.file, b.file))
  const { problems: crossProblems, failedFiles } = crossFileProblems(state.settings, results, flowsFolderMissing)
  const good = (result: FlowFileResult) => (result.flow && !failedFiles.has(result.file) ? result.flow : null)
  const goodSlugs = new Set(results.map((r) => good(r)?.slug).filter((slug) => slug !== undefined))
  // An invalid file keeps the flow it had in the previous project, unless its slug is now taken.
  const previousByFile = new Map([...(keep?.flows.values() ?? [])].map((flow) => [flow.file, flow]))
  const flows = new Map<string, Flow>()
  for (const result of results) {
    const kept = previousByFile.get(result.file)
    const flow = good(result) ?? (kept && !goodSlugs.has(kept.slug) && !flows.has(kept.slug) ? kept : null)
    if (flow) flows.set(flow.slug, flow)
  }
  const problems: Problem[] = [...state.settings.collector.problems, ...crossProblems]
  for (const result of results) problems.push(...result.problems)
  const project: Project = { dir, settings: state.settings.settings, flows, secrets: state.secrets, problems: sortProblems(problems) }
  loadStates.set(project, state)
  return project
}
