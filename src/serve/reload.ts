// Reloading on change: one chokidar watcher per project on its folder, filtered by a function (no
// glob strings since chokidar 4) to flowctl.yaml, the dotenv file and the flow files, plus a plain
// folder watch as a safety net for the writes chokidar misses. Changes are
// batched for ~30 ms, then `reloadProject` builds a new Project that the workspace swaps in; a flow
// file with problems keeps its last good version (the loader does that) and its problems are logged.
import { watch as watchFolder, type FSWatcher as FolderWatcher } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import type { FSWatcher } from 'chokidar'
import { formatProblem, isFlowctlError } from '../errors.js'
import { isFlowFileName } from '../project/flow-file.js'
import type { Project } from '../model/project.js'
import type { Workspace } from './workspace.js'
import { enableTracing } from '../telemetry/tracing.js'

/**
 * chokidar throttles `change` events and can drop the last of several quick writes to one file, so
 * every event is followed by a check of the file's stat this much later.
 */
const RECHECK_MS = 150

/** What identifies one version of a file on disk (or its absence). */
async function fileSignature(file: string): Promise<string> {
  try {
    const info = await stat(file)
    return `${info.ino}:${info.size}:${info.mtimeMs}`
  } catch {
    return 'missing'
  }
}

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
export function isWatchedFile(paths: WatchedPaths, file: string): boolean {
  if (file === paths.settingsFile || file === paths.secretsFile) return true
  return isInside(file, paths.flowsDir) && file !== paths.flowsDir && isFlowFileName(file)
}

/** chokidar's `ignored`: keep the folders on the way to the watched files, and those files. */
function ignoredBy(paths: WatchedPaths) {
  return (path: string, stats?: { isDirectory(): boolean }): boolean => {
    const full = resolve(path)
    if (full === paths.dir || isInside(paths.flowsDir, full)) return false // the project folder and folders down to flows/
    if (isInside(full, paths.flowsDir)) return stats ? !stats.isDirectory() && !isWatchedFile(paths, full) : false
    return !isWatchedFile(paths, full)
  }
}

class ProjectWatcher {
  #watcher: FSWatcher | null = null
  /**
   * Plain `fs.watch` on the project folder and the flows folder, beside chokidar: chokidar watches
   * each file on its own and now and then reports nothing at all for a write (the reload
   * benchmark's chokidar-only baseline misses about one write in ten), and the stat re-check below
   * only follows an event. A folder watch sees every write to a file in it.
   */
  #folderWatchers: FolderWatcher[] = []
  #paths: WatchedPaths
  #pending = new Set<string>()
  #timer: NodeJS.Timeout | null = null
  #running: Promise<void> = Promise.resolve()
  #closed = false
  /** Signature of each file as it was when its last reload began. */
  #loaded = new Map<string, string>()
  #rechecks = new Map<string, NodeJS.Timeout>()

  constructor(
    private project: Project,
    private readonly workspace: Workspace,
    private readonly options: WatchOptions,
  ) {
    this.#paths = watchedPaths(project)
  }

  async start(): Promise<void> {
    const { watch } = await import('chokidar')
    const watcher = watch(this.#paths.dir, {
      ignoreInitial: true,
      awaitWriteFinish: false,
      ignored: ignoredBy(this.#paths),
    })
    const onChange = (path: string) => this.#changed(resolve(path))
    watcher.on('add', onChange).on('change', onChange).on('unlink', onChange)
    watcher.on('error', (error) => this.options.log(`watch error in ${this.#paths.dir}: ${error instanceof Error ? error.message : String(error)}`))
    await new Promise<void>((ready) => watcher.once('ready', () => ready()))
    this.#watcher = watcher
    for (const folder of new Set([this.#paths.dir, this.#paths.flowsDir])) {
      try {
        const folderWatcher = watchFolder(folder, (_event, name) => {
          if (name) this.#changed(join(folder, name.toString()))
        })
        folderWatcher.on('error', () => folderWatcher.close()) // the folder went away; chokidar still reports it
        this.#folderWatchers.push(folderWatcher)
      } catch {
        // No such folder (yet): chokidar sees it appear.
      }
    }
  }

  #closeFolderWatchers(): void {
    for (const folderWatcher of this.#folderWatchers) folderWatcher.close()
    this.#folderWatchers = []
  }

  #changed(file: string): void {
    if (this.#closed || !isWatchedFile(this.#paths, file)) return
    this.#pending.add(file)
    this.#scheduleRecheck(file)
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#timer = null
      // Reloads of one project run one after another; changes during a reload wait for the next.
      this.#running = this.#running.then(() => this.#reload())
    }, this.options.debounceMs ?? 30)
  }

  #scheduleRecheck(file: string): void {
    clearTimeout(this.#rechecks.get(file))
    const timer = setTimeout(async () => {
      this.#rechecks.delete(file)
      if (this.#closed) return
      if ((await fileSignature(file)) !== this.#loaded.get(file)) this.#changed(file)
    }, RECHECK_MS)
    this.#rechecks.set(file, timer)
  }

  async #reload(): Promise<void> {
    if (this.#closed || this.#pending.size === 0) return
    const pending = [...this.#pending]
    this.#pending.clear()
    // Several watchers report one write: a file whose version on disk was already loaded is skipped,
    // so one save gives one reload and one message.
    const changed: string[] = []
    const signatures = new Map<string, string>()
    for (const file of pending) {
      const signature = await fileSignature(file)
      if (this.#loaded.get(file) === signature) continue
      this.#loaded.set(file, signature)
      signatures.set(file, signature)
      changed.push(file)
    }
    if (changed.length === 0) return
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
      this.workspace.events.publish({
        type: 'reload',
        projectId: next.settings.projectId,
        data: { projectId: next.settings.projectId, changed: files, summary, ok: problems.length === 0 },
      })
      const paths = watchedPaths(next)
      if (paths.flowsDir !== this.#paths.flowsDir || paths.secretsFile !== this.#paths.secretsFile) await this.#rewatch(paths)
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

  async #rewatch(paths: WatchedPaths): Promise<void> {
    this.#closeFolderWatchers()
    await this.#watcher?.close()
    this.#paths = paths
    await this.start()
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#timer) clearTimeout(this.#timer)
    for (const timer of this.#rechecks.values()) clearTimeout(timer)
    this.#closeFolderWatchers()
    await this.#running.catch(() => {})
    await this.#watcher?.close()
  }
}

/**
 * What a reload changed, per flow, for the log and the `reload` event (SPEC §14): flows added,
 * removed or changed, and for each changed file with problems whether its previous version is
 * still being served (the loader keeps the last good version of a broken file).
 */
export function describeReload(previous: Project, next: Project, files: string[]): string[] {
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
