// Reloading on change: the shared file watcher (./file-watcher.ts: a plain watch on the project
// folder, the flows folder and the dotenv file's folder, chokidar to see those folders appear or go;
// changes count for flowctl.yaml, the dotenv file and the flow files; files replaced by rename are
// followed). Changes are batched for ~30 ms,
// then `reloadProject` builds a new Project that the workspace swaps in; a flow file with problems
// keeps its last good version (the loader does that) and its problems are logged.
import { dirname, join, relative, resolve, sep } from 'node:path'
import { formatProblem, isFlowctlError } from '../errors.js'
import { isFlowFileName } from '../project/flow-file.js'
import type { Project } from '../model/project.js'
import { FileWatcher, type WatchTarget } from './file-watcher.js'
import type { Workspace } from './workspace.js'
import { refusalChanges } from './refusing-flows.js'
import { enableTracing } from '../telemetry/tracing.js'

export interface WatchOptions {
  log: (line: string) => void
  debounceMs?: number
  /** Called after every reload attempt (tests wait on it). */
  onReload?: (projectDir: string) => void
}

export interface ProjectWatchers {
  close(): Promise<void>
}

interface WatchedPaths {
  dir: string
  settingsFile: string
  secretsFile: string
  flowsDir: string
}

function watchedPaths(project: Project): WatchedPaths {
  const dir = resolve(project.dir)
  return {
    dir,
    settingsFile: join(dir, 'flowctl.yaml'),
    secretsFile: resolve(dir, project.settings.secrets),
    flowsDir: resolve(dir, project.settings.flows),
  }
}

function isInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder + sep)
}

/** Files whose change means a reload. */
function isWatchedFile(paths: WatchedPaths, file: string): boolean {
  if (file === paths.settingsFile || file === paths.secretsFile) return true
  return isInside(file, paths.flowsDir) && file !== paths.flowsDir && isFlowFileName(file)
}

/** Folders left out: all but the project folder and those down to the flows folder and the dotenv file's. */
function ignoredBy(paths: WatchedPaths) {
  const secretsDir = dirname(paths.secretsFile)
  return (path: string): boolean => {
    const full = resolve(path)
    return !(full === paths.dir || isInside(paths.flowsDir, full) || isInside(secretsDir, full))
  }
}

/** What the shared watcher watches for a project: the flows folder appearing or going reloads everything. */
function watchTarget(paths: WatchedPaths): WatchTarget {
  return {
    dir: paths.dir,
    folders: [paths.dir, paths.flowsDir, dirname(paths.secretsFile)],
    isWatched: (file) => isWatchedFile(paths, file),
    isWatchedFolder: (folder) => folder === paths.flowsDir,
    ignored: ignoredBy(paths),
  }
}

class ProjectWatcher {
  #files: FileWatcher
  #paths: WatchedPaths
  #closed = false

  constructor(
    private project: Project,
    private readonly workspace: Workspace,
    private readonly options: WatchOptions,
  ) {
    this.#paths = watchedPaths(project)
    this.#files = new FileWatcher(watchTarget(this.#paths), {
      debounceMs: options.debounceMs ?? 30,
      onChange: (files) => this.#reload(files),
      onError: (message) => options.log(`watch error in ${this.#paths.dir}: ${message}`),
    })
  }

  start(): Promise<void> {
    return this.#files.start()
  }

  /** `changed`: files whose version on disk is new (one save gives one reload and one message). */
  async #reload(changed: string[]): Promise<void> {
    if (this.#closed) return
    const previous = this.project
    const files = changed.map((file) => relative(previous.dir, file) || file)
    try {
      const { reloadProject } = await import('../project/load.js')
      const next = await reloadProject(previous, changed)
      if (this.#closed) return
      // telemetry.otlp.endpoint may have changed (SPEC §23); the SDK loads only if it now exports.
      if (next.settings.otlpEndpoint !== previous.settings.otlpEndpoint) await enableTracing([next], this.options.log)
      this.workspace.replace(next)
      this.project = next
      const problems = next.problems.filter((problem) => files.includes(problem.file))
      for (const problem of problems) this.options.log(`${next.settings.projectId}: ${formatProblem(problem)}`)
      const summary = describeReload(previous, next, files)
      this.options.log(`reloaded ${next.settings.projectId} (${files.join(', ')}): ${summary.join('; ')}`)
      for (const line of refusalChanges(previous, next)) this.options.log(line)
      this.workspace.events.publish({
        type: 'reload',
        projectId: next.settings.projectId,
        data: { projectId: next.settings.projectId, changed: files, summary, ok: problems.length === 0 },
      })
      const paths = watchedPaths(next)
      if (paths.flowsDir !== this.#paths.flowsDir || paths.secretsFile !== this.#paths.secretsFile) {
        this.#paths = paths
        await this.#files.retarget(watchTarget(paths))
      }
    } catch (error) {
      // A broken flowctl.yaml keeps the whole previous project serving.
      if (isFlowctlError(error) && error.problems.length) for (const problem of error.problems) this.options.log(formatProblem(problem))
      else this.options.log(`reload of ${files.join(', ')} failed: ${error instanceof Error ? error.message : String(error)}`)
      const projectId = previous.settings.projectId
      this.options.log(`reload of ${projectId} failed: the previous version of the whole project is still being served`)
      this.workspace.events.publish({
        type: 'reload',
        projectId,
        data: { projectId, changed: files, summary: ['reload failed; the previous version is still served'], ok: false },
      })
    } finally {
      this.options.onReload?.(previous.dir)
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.#files.close()
  }
}

/**
 * What a reload changed, per flow, for the log and the `reload` event (SPEC §14): flows added,
 * removed or changed, and for each changed file with problems whether its previous version is
 * still being served (the loader keeps the last good version of a broken file).
 */
function describeReload(previous: Project, next: Project, files: string[]): string[] {
  const lines: string[] = []
  const before = new Map([...previous.flows.values()].map((flow) => [flow.slug, flow]))
  const after = new Map([...next.flows.values()].map((flow) => [flow.slug, flow]))
  for (const [slug, flow] of after) {
    const old = before.get(slug)
    if (!old) lines.push(`flow ${slug} added`)
    else if (old.version !== flow.version) lines.push(`flow ${slug} changed`)
  }
  for (const slug of before.keys()) if (!after.has(slug)) lines.push(`flow ${slug} removed`)
  for (const file of files) {
    if (!next.problems.some((problem) => problem.file === file && problem.severity === 'error')) continue
    const kept = [...after.values()].find((flow) => flow.file === file)
    lines.push(
      kept ? `${file} has problems: the previous version of flow ${kept.slug} is still being served` : `${file} has problems: no version of it is served`,
    )
  }
  if (files.some((file) => file === 'flowctl.yaml' || !file.startsWith(next.settings.flows))) lines.push('project settings or secrets reloaded')
  return lines.length ? lines : ['no flow changed']
}

/** Starts watching every project of the workspace; resolves once the watchers are ready. */
export async function watchProjects(workspace: Workspace, options: WatchOptions): Promise<ProjectWatchers> {
  const watchers = workspace.list().map((entry) => new ProjectWatcher(entry.project, workspace, options))
  await Promise.all(watchers.map((watcher) => watcher.start()))
  return { close: async () => void (await Promise.all(watchers.map((watcher) => watcher.close()))) }
}
