// `flowctl test --watch`: a pass now, then another after every change to the project's YAML/JSON files
// or its dotenv file, until Ctrl-C. A broken file is reported and the watch goes on. It watches
// through serve's watcher (src/serve/file-watcher.ts), so a file replaced by rename (an editor's safe
// write) is followed as serve follows it.
import { basename, extname, join, relative, resolve, sep } from 'node:path'
import { formatProblem, isFlowctlError } from '../errors.js'
import type { WatchTarget } from '../serve/file-watcher.js'
import type { CommandContext } from './context.js'

const IGNORED_FOLDERS = new Set(['.flowctl', 'node_modules', '.git'])
const WATCHED_EXTENSIONS = new Set(['.yaml', '.yml', '.json'])
/** Editors save in bursts (write, rename, chmod): one pass per burst. */
const SETTLE_MS = 100

function isInIgnoredFolder(dir: string, path: string): boolean {
  return relative(dir, path)
    .split(sep)
    .some((part) => IGNORED_FOLDERS.has(part))
}

function isWatchedChange(dir: string, file: string, ignoredFiles: Set<string>): boolean {
  const path = resolve(dir, file)
  if (ignoredFiles.has(path)) return false
  if (isInIgnoredFolder(dir, path)) return false
  const name = basename(path)
  return WATCHED_EXTENSIONS.has(extname(name).toLowerCase()) || name.startsWith('.env')
}

/** What the shared watcher (the one `serve` reloads with) watches for the tests: the whole project folder. */
function testWatchTarget(dir: string, ignoredFiles: Set<string>): WatchTarget {
  return {
    dir,
    folders: [dir, join(dir, 'flows'), join(dir, 'tests')],
    isWatched: (file) => isWatchedChange(dir, file, ignoredFiles),
    // A folder that goes takes its test or flow files with it.
    isWatchedFolder: (folder) => folder !== dir && !isInIgnoredFolder(dir, folder),
    ignored: (path) => isInIgnoredFolder(dir, path),
  }
}

/**
 * Runs `pass` now and after each change; resolves with the last pass's exit code on SIGINT/SIGTERM
 * or when the command is told to stop (its output pipe closed).
 * `ignoredFiles`: absolute paths the pass itself writes (the JUnit report), which must not retrigger it.
 */
export async function watchTests(context: CommandContext, dir: string, pass: () => Promise<number>, ignoredFiles: string[] = []): Promise<number> {
  const { output } = context
  const ignored = new Set(ignoredFiles.map((file) => resolve(context.cwd, file)))
  let lastCode = 0

  const runPass = async (): Promise<void> => {
    try {
      lastCode = await pass()
    } catch (error) {
      // flowctl.yaml broken, a file unreadable: say so and keep watching.
      lastCode = isFlowctlError(error) ? error.exitCode : 1
      output.error(output.color.red(`error: ${error instanceof Error ? error.message : String(error)}`))
      if (isFlowctlError(error)) for (const problem of error.problems) output.error(formatProblem(problem))
    }
  }
  const sayWatching = () => {
    if (!output.json) output.line(output.color.dim(`watching ${relative(context.cwd, dir) || '.'} for changes (Ctrl-C to stop)`))
  }

  await runPass()
  const { FileWatcher } = await import('../serve/file-watcher.js')
  // Changes during a pass wait for it to end, then give one more pass.
  const watcher = new FileWatcher(testWatchTarget(dir, ignored), {
    debounceMs: SETTLE_MS,
    onChange: async (files) => {
      const shown = files.length === 1 ? relative(dir, files[0]!) : `${files.length} files`
      if (!output.json) output.line(output.color.dim(`\nchange in ${shown}; running the tests again`))
      await runPass()
      sayWatching()
    },
    onError: (message) => output.error(output.color.red(`error: watching ${dir} failed: ${message}`)),
  })
  // Said once the watcher has read the folder: a change made after the line is seen.
  await watcher.start()
  sayWatching()
  let stop = () => {}
  const stopped = new Promise<void>((resolveStop) => (stop = resolveStop))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  context.signal?.addEventListener('abort', stop, { once: true })
  if (context.signal?.aborted) stop()
  await stopped
  process.off('SIGINT', stop)
  process.off('SIGTERM', stop)
  context.signal?.removeEventListener('abort', stop)
  await watcher.close()
  return lastCode
}
