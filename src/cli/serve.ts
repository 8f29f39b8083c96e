// `flowctl serve`: start the serve runtime (src/serve/: projects, stores, reload, --cron), build the
// h3 app on it, listen, and shut down gracefully on SIGINT/SIGTERM or the context's signal (stop
// accepting, let in-flight requests finish for up to 10 s, close watchers and stores).
// Never calls process.exit: the promise resolves after shutdown and the CLI entry sets the exit code.
import { FlowctlError, isFlowctlError } from '../errors.js'
import type { Project } from '../model/project.js'

export interface ServeOptions {
  port?: number
  /** Interface to listen on; default 127.0.0.1 (only this machine). Use 0.0.0.0 to expose it. */
  host?: string
  /** `--trust-proxy` (SPEC §17): hops or proxy addresses; true = 1 hop. */
  trustProxy?: import('../http/trust-proxy.js').TrustProxy
  /** `--max-connections` (SPEC §18): sockets open at once in total; 0 = no cap; default 10,000. */
  maxConnections?: number
  /** `--allowed-hosts`: Host names (lower case, no port) that count as loopback (SPEC §17). */
  allowedHosts?: string[]
  watch?: boolean
  quiet?: boolean
  cron?: boolean
  users?: string
  json?: boolean
  /** The folder the default users file is found in; default process.cwd(). */
  cwd?: string
  /** Environment (PORT, CRON_SECRET, FLOWCTL_*); default process.env. */
  env?: NodeJS.ProcessEnv
  /** Stops the server like SIGTERM does (tests and embedders). */
  signal?: AbortSignal
  /** Called once the server listens, with its base URL. */
  onListening?: (url: string) => void
  stdout?: NodeJS.WritableStream
  stderr?: NodeJS.WritableStream
}

const SHUTDOWN_GRACE_MS = 10_000

export async function serveCommand(dirs: string[], options: ServeOptions = {}): Promise<void> {
  const env = options.env ?? process.env
  const stdout = options.stdout ?? process.stdout
  const stderr = options.stderr ?? process.stderr
  const out = (line: string) => void stdout.write(line + '\n')
  const err = (line: string) => void stderr.write(line + '\n')

  // Registered first, so a SIGTERM during startup still ends in a graceful shutdown once started.
  let requestStop!: () => void
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve))
  const onSignal = () => requestStop()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  options.signal?.addEventListener('abort', onSignal, { once: true })
  if (options.signal?.aborted) requestStop()
  const removeSignalHandlers = () => {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    options.signal?.removeEventListener('abort', onSignal)
  }
  try {
    await serve(dirs, options, stopRequested, { out, err, env, cwd: options.cwd ?? process.cwd() })
  } finally {
    removeSignalHandlers()
  }
}

interface Io {
  out: (line: string) => void
  err: (line: string) => void
  env: NodeJS.ProcessEnv
  cwd: string
}

async function serve(dirs: string[], options: ServeOptions, stopRequested: Promise<void>, { out, err, env, cwd }: Io): Promise<void> {
  const { startRuntime } = await import('../serve/runtime.js')
  const { loadingForServe } = await import('../project/long-load.js')
  loadingForServe()
  const runtime = await startRuntime(dirs, { env, log: err, watch: options.watch !== false })
  const { workspace } = runtime

  const shutdown = new AbortController()
  const { AsyncRunner } = await import('../http/async-runner.js')
  const asyncRunner = new AsyncRunner(workspace, { log: err })
  const { WaitRunner } = await import('../http/wait-runner.js')
  const waitRunner = new WaitRunner(workspace, { log: err })
  const { createApp } = await import('../http/app.js')
  const { defaultUsersFile } = await import('../users/users-file.js')
  // --users names the one file; otherwise the current folder's and each served project's own count.
  const usersFile = options.users ?? defaultUsersFile(cwd)
  const projectUsersFiles = options.users ? [] : workspace.list().map((entry) => defaultUsersFile(entry.project.dir))
  const app = createApp(workspace, {
    trustProxy: options.trustProxy ?? false,
    ...(options.allowedHosts?.length ? { allowedHosts: options.allowedHosts } : {}),
    quiet: Boolean(options.quiet),
    usersFile,
    projectUsersFiles,
    cronSecret: env.CRON_SECRET || undefined,
    signal: shutdown.signal,
    log: out,
    asyncQueued: (projectId) => asyncRunner.wake(projectId),
    runResumed: (projectId) => waitRunner.wake(projectId),
  })

  const host = options.host ?? '127.0.0.1'
  const port = options.port ?? (env.PORT ? Number(env.PORT) : 3000)
  let server: import('../serve/listen.js').RunningServer
  try {
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new FlowctlError('USAGE', `the port must be a number from 0 to 65535, got "${String(options.port ?? env.PORT)}"`)
    }
    const { listenApp } = await import('../serve/listen.js')
    // Last thing before listening: what start-up left behind goes back to the system.
    const { compactHeap } = await import('../serve/compact-heap.js')
    compactHeap()
    // Behind a proxy every socket is the proxy's: no cap per address there.
    server = await listenApp(app, {
      host,
      port,
      ...(options.trustProxy ? { connectionsPerIp: 0 } : {}),
      ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    })
  } catch (error) {
    await runtime.close()
    if (isFlowctlError(error)) throw error
    throw listenError(error, host, port)
  }
  const baseUrl = server.url
  // bin/flowctl.js kept V8's young generation at its first size while the projects loaded and the
  // app was built (a load's survivors made V8 double it up to 2 x 16 MB, for good). Under requests
  // V8 grows it as it would by default again (2 is V8's default factor), so per-request GC is what
  // it was.
  process.getBuiltinModule('node:v8').setFlagsFromString('--semi-space-growth-factor=2')
  // bin/flowctl.js loaded the projects with V8's optimising compiler off (src/project/long-load.ts):
  // requests get optimised code as in any Node server.
  process.getBuiltinModule('node:v8').setFlagsFromString('--opt')
  // Resume URLs (SPEC §22) made in this process point here unless FLOWCTL_PUBLIC_URL says otherwise.
  const { setServingOrigin } = await import('../flow/park.js')
  setServingOrigin(baseUrl)

  if (options.cron) runtime.startCron()
  // Async runs queued before this start (a restart after a crash) are taken up at once.
  asyncRunner.start()
  // Parked runs due while no instance ran (a restart) resume at once.
  waitRunner.start()
  const served = workspace.list().map((entry) => entry.project)
  const { describeStore } = await import('./store-label.js')
  printUrls(served, baseUrl, Boolean(options.json), out, (project) => describeStore(project, env))
  if (!options.json) {
    out(`  Users    ${await describeUsersFiles([usersFile, ...projectUsersFiles])}`)
    for (const hint of startupHints(served, env, Boolean(options.cron))) err(hint)
  }
  options.onListening?.(baseUrl)

  await stopRequested

  if (!options.json) err('shutting down…')
  runtime.stopCron()
  // Open /api/events streams never finish by themselves: end them, so only runs are waited for.
  workspace.events.endStreams()
  // Async runs still going after the grace period go back to the queue for the next instance.
  await Promise.all([server.shutdown(SHUTDOWN_GRACE_MS, () => shutdown.abort()), asyncRunner.stop(SHUTDOWN_GRACE_MS), waitRunner.stop(SHUTDOWN_GRACE_MS)])
  await runtime.close()
}

/** listhen reports a busy port as "Unable to find an available port"; say it plainly. */
function listenError(error: unknown, host: string, port: number): FlowctlError {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === 'EADDRINUSE' || /available port/i.test(message)) {
    return new FlowctlError(
      'LISTEN_FAILED',
      `port ${port} on ${host} is already in use (another flowctl serve?); stop it, or choose a free port with --port N or PORT=N`,
      { cause: error },
    )
  }
  if (code === 'EACCES')
    return new FlowctlError('LISTEN_FAILED', `no permission to listen on ${host}:${port}; choose a port above 1023 with --port N`, { cause: error })
  return new FlowctlError('LISTEN_FAILED', `cannot listen on ${host}:${port}: ${message}`, { cause: error })
}

/** The users files that exist and how many users each holds, for the banner (a valid token's 401 starts here). */
async function describeUsersFiles(files: string[]): Promise<string> {
  const { readUsers } = await import('../users/users-file.js')
  const { existsSync } = await import('node:fs')
  const found: string[] = []
  for (const file of new Set(files)) {
    if (!existsSync(file)) continue
    const count = await readUsers(file).then(
      (users) => String(users.length),
      () => 'unreadable, no',
    )
    found.push(`${file} (${count} user${count === '1' ? '' : 's'})`)
  }
  return found.length ? found.join(', ') : `none yet: ${files[0]} (add one with flowctl users add NAME --grant PROJECT_ID=viewer)`
}

/** What the scheduler endpoint will and will not do, said once at start-up (nothing with --cron). */
function startupHints(projects: Project[], env: NodeJS.ProcessEnv, cron: boolean): string[] {
  if (cron || env.CRON_SECRET) return []
  const scheduled = projects.some((project) => [...project.flows.values()].some((flow) => flow.schedule?.enabled))
  return [
    `note: POST /api/cron/tick is disabled because CRON_SECRET is not set${scheduled ? ', and schedules exist: nothing runs them' : ''}; ` +
      'use serve --cron, flowctl tick from crontab, or set CRON_SECRET for an external timer',
  ]
}

/** The banner. Tests and scripts read the URL from its first line: keep `flowctl serving on <url>` as it is. */
function printUrls(projects: Project[], baseUrl: string, json: boolean, out: (line: string) => void, storeOf: (project: Project) => string): void {
  const dashboard = `${baseUrl}/`
  const rows = projects.map((project) => {
    const id = project.settings.projectId
    const store = storeOf(project)
    return {
      projectId: id,
      name: project.settings.name,
      runApi: `${baseUrl}/api/run/${id}/`,
      status: `${baseUrl}/status`,
      docs: `${baseUrl}/docs/${id}`,
      store,
    }
  })
  if (json) {
    out(JSON.stringify({ ok: true, url: baseUrl, dashboard, projects: rows }))
    return
  }
  out(`flowctl serving on ${baseUrl}`)
  out(`  Dashboard ${dashboard}`)
  for (const row of rows) {
    out(`  ${row.projectId} (${row.name})`)
    out(`    Run API  ${row.runApi}<slug>`)
    out(`    Status   ${row.status}`)
    out(`    Docs     ${row.docs}`)
    out(`    Store    ${row.store}`)
  }
}
