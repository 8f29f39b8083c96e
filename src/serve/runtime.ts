// The serve runtime: the projects one `flowctl serve` process loaded, their stores (the store pool
// of the workspace), reloading on file changes and the `--cron` minute timer. The h3 app (src/http/)
// reads everything it needs from the workspace it is given; the CLI (src/cli/serve.ts) puts the
// runtime, the app and the listener (listen.ts) together.
import { FlowctlError, formatProblem, isFlowctlError } from '../errors.js'
import type { Project } from '../model/project.js'
import { startCronTimer } from './cron-timer.js'
import { openProjectStore } from './project-store.js'
import type { ProjectWatchers } from './reload.js'
import { Workspace, type StoreOpener, type WorkspaceOptions } from './workspace.js'
import { enableTracing, shutdownTracing } from '../telemetry/tracing.js'

export interface RuntimeOptions {
  /** FLOWCTL_DATABASE_URL, FLOWCTL_SECRET_* and the other settings of the environment. */
  env: NodeJS.ProcessEnv
  /** Load problems, store outages, reloads and ticks (the serve log's standard error). */
  log: (line: string) => void
  /** Reload projects when their files change (default true). */
  watch?: boolean
  /** How stores open (default: each project's database). */
  openStore?: StoreOpener
  workspace?: WorkspaceOptions
}

export interface ServeRuntime {
  readonly workspace: Workspace
  /** Starts ticking the scheduler once a minute (`serve --cron`). */
  startCron(): void
  /** Stops the timer (shutdown: no tick starts while requests drain). */
  stopCron(): void
  /** Stops the timer and the watchers, then closes every store. */
  close(): Promise<void>
}

/**
 * Loads the projects of `dirs`, opens their stores and starts watching their files. A project that
 * fails to load is reported and left out; none loaded at all is an error (nothing is left open then).
 */
export async function startRuntime(dirs: string[], options: RuntimeOptions): Promise<ServeRuntime> {
  const { env, log } = options
  const { projects, notFound } = await loadProjects(dirs, env, log)
  // Nothing but missing projects: the same error (and exit code 2) as every other command gives.
  if (projects.length === 0 && notFound.length === dirs.length && notFound[0]) throw notFound[0]
  // Spans (SPEC §23): the OpenTelemetry SDK is imported only when a project exports them.
  await enableTracing(projects, log)
  const workspace = new Workspace(options.openStore ?? ((project) => openProjectStore(project, { env })), options.workspace)
  for (const project of projects) {
    try {
      const entry = await workspace.add(project)
      if (entry.storeError) log(`${project.settings.projectId}: store unavailable: ${entry.storeError} (runs answer 503; retrying)`)
    } catch (error) {
      log(`error: ${project.dir}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  if (workspace.list().length === 0) {
    await workspace.close()
    throw new FlowctlError('PROJECT_INVALID', 'no project could be loaded')
  }
  // Watching starts before the server listens, so no change made after it answers is missed.
  let watchers: ProjectWatchers | null = null
  if (options.watch !== false) {
    const { watchProjects } = await import('./reload.js')
    watchers = await watchProjects(workspace, { log })
  }
  let stopCron: (() => void) | null = null
  return {
    workspace,
    startCron() {
      stopCron ??= startCronTimer(workspace, log)
    },
    stopCron() {
      stopCron?.()
      stopCron = null
    },
    async close() {
      stopCron?.()
      await watchers?.close()
      await workspace.close()
      // After the last run ended: its spans are exported before the process exits.
      await shutdownTracing()
    },
  }
}

async function loadProjects(dirs: string[], env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<{ projects: Project[]; notFound: FlowctlError[] }> {
  const { loadProject } = await import('../project/load.js')
  const projects: Project[] = []
  const notFound: FlowctlError[] = []
  const ids = new Map<string, string>()
  for (const dir of dirs) {
    try {
      const project = await loadProject(dir, { env })
      for (const problem of project.problems) log(`${project.settings.projectId}: ${formatProblem(problem)}`)
      const id = project.settings.projectId
      const other = ids.get(id)
      if (other) {
        log(`error: ${dir}: projectId "${id}" is already served from ${other}; skipped`)
        continue
      }
      ids.set(id, dir)
      projects.push(project)
    } catch (error) {
      if (!isFlowctlError(error)) throw error
      if (error.code === 'PROJECT_NOT_FOUND') {
        notFound.push(error)
        if (dirs.length > 1) log(`error: ${error.message}`)
        continue
      }
      log(`error: ${dir}: ${error.message}`)
      for (const problem of error.problems) log(formatProblem(problem))
    }
  }
  return { projects, notFound }
}
