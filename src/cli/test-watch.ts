// `flowctl test --watch`: a pass now, then another after every change to the project's YAML/JSON files
// or its dotenv file, until Ctrl-C. A broken file is reported and the watch goes on.
import { watch, type FSWatcher } from 'node:fs'
import { basename, extname, relative, resolve, sep } from 'node:path'
import { formatProblem, isFlowctlError } from '../errors.js'
import type { CommandContext } from './context.js'

const IGNORED_FOLDERS = new Set(['.flowctl', 'node_modules', '.git'])
const WATCHED_EXTENSIONS = new Set(['.yaml', '.yml', '.json'])
/** Editors save in bursts (write, rename, chmod): one pass per burst. */
const SETTLE_MS = 100

export function isWatchedChange(dir: string, file: string, ignoredFiles: Set<string>): boolean {
  const path = resolve(dir, file)
  if (ignoredFiles.has(path)) return false
  const parts = relative(dir, path).split(sep)
  if (parts.some((part) => IGNORED_FOLDERS.has(part))) return false
  const name = basename(path)
  return WATCHED_EXTENSIONS.has(extname(name).toLowerCase()) || name.startsWith('.env')
}

/**
 * Runs `pass` now and after each change; resolves with the last pass's exit code on SIGINT/SIGTERM.
 * `ignoredFiles`: absolute paths the pass itself writes (the JUnit report), which must not retrigger it.
 */
export async function watchTests(context: CommandContext, dir: string, pass: () => Promise<number>, ignoredFiles: string[] = []): Promise<number> {
  const { output } = context
  const ignored = new Set(ignoredFiles.map((file) => resolve(context.cwd, file)))
  let lastCode = 0
  let running: Promise<void> | null = null
  let pending = false
  let timer: NodeJS.Timeout | undefined

  const runPass = async (): Promise<void> => {
    try {
      lastCode = await pass()
    } catch (error) {
      // flowctl.yaml broken, a file unreadable: say so and keep watching.
      lastCode = isFlowctlError(error) ? error.exitCode : 1
      output.error(output.color.red(`error: ${error instanceof Error ? error.message : String(error)}`))
      if (isFlowctlError(error)) for (const problem of error.problems) output.error(formatProblem(problem))
    }
    if (!output.json) output.line(output.color.dim(`watching ${relative(context.cwd, dir) || '.'} for changes (Ctrl-C to stop)`))
  }
  const schedule = (file: string | null) => {
    if (file !== null && !isWatchedChange(dir, file, ignored)) return
    clearTimeout(timer)
    timer = setTimeout(() => {
      if (running) {
        pending = true
        return
      }
      if (!output.json) output.line(output.color.dim(`\nchange in ${file ?? 'the project'}; running the tests again`))
      running = runPass().finally(() => {
        running = null
        if (pending) {
          pending = false
          schedule(null)
        }
      })
    }, SETTLE_MS)
  }

  running = runPass().finally(() => (running = null))
  await running
  // Recursive fs.watch (inotify on Linux since Node 20): one watcher for flows/, tests/ and the project files.
  const watcher: FSWatcher = watch(dir, { recursive: true }, (_event, file) => schedule(file === null ? null : String(file)))
  watcher.on('error', (error) => output.error(output.color.red(`error: watching ${dir} failed: ${error.message}`)))
  await new Promise<void>((stop) => {
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  clearTimeout(timer)
  watcher.close()
  await running
  return lastCode
}
