// The one file watcher of flowctl, shared by `serve` (reloads) and `flowctl test --watch` (reruns):
// chokidar on a folder, filtered by a function (no glob strings since chokidar 4), plus a plain
// folder watch as a safety net for the writes chokidar misses, plus a stat re-check after each event.
// Editors' "safe write" replaces a file by renaming a temporary one over it: a watch on the file's
// old inode then sees nothing more, while these watchers follow the new file (chokidar re-adds it,
// the folder watch reports the name). Changes are batched for `debounceMs`, dropped when the file's
// version on disk (inode, size, mtime) was already reported, and handed over one batch at a time.
import { watch as watchFolder, type FSWatcher as FolderWatcher } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { FSWatcher } from 'chokidar'

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

/** What to watch. */
export interface WatchTarget {
  /** The folder chokidar watches, recursively, minus what `ignored` says. */
  dir: string
  /** Folders also watched with a plain, non-recursive fs.watch (missing ones are skipped). */
  folders: string[]
  /** Absolute paths of the files whose changes count. */
  isWatched(file: string): boolean
  /** chokidar's `ignored` (called with and without stats). */
  ignored(path: string, stats?: { isDirectory(): boolean }): boolean
}

export interface FileWatcherOptions {
  debounceMs: number
  /** The files whose version on disk changed; never called again before the returned promise settles. */
  onChange(files: string[]): Promise<void> | void
  onError(message: string): void
}

export class FileWatcher {
  #chokidar: FSWatcher | null = null
  /**
   * chokidar watches each file on its own and now and then reports nothing at all for a write (the
   * reload benchmark's chokidar-only baseline misses about one write in ten); a folder watch sees
   * every write to a file in it.
   */
  #folderWatchers: FolderWatcher[] = []
  #pending = new Set<string>()
  #timer: NodeJS.Timeout | null = null
  #running: Promise<void> = Promise.resolve()
  #closed = false
  /** Signature of each file as it was when it was last reported. */
  #reported = new Map<string, string>()
  #rechecks = new Map<string, NodeJS.Timeout>()

  constructor(
    private target: WatchTarget,
    private readonly options: FileWatcherOptions,
  ) {}

  /** Resolves once chokidar has read the folder: writes after that are seen. */
  async start(): Promise<void> {
    const { watch } = await import('chokidar')
    const watcher = watch(this.target.dir, { ignoreInitial: true, awaitWriteFinish: false, ignored: this.target.ignored })
    const onChange = (path: string) => this.#changed(resolve(path))
    watcher.on('add', onChange).on('change', onChange).on('unlink', onChange)
    watcher.on('error', (error) => this.options.onError(error instanceof Error ? error.message : String(error)))
    await new Promise<void>((ready) => watcher.once('ready', () => ready()))
    this.#chokidar = watcher
    for (const folder of new Set(this.target.folders)) {
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

  /** Watches other paths from now on (a project whose flows folder moved); pending changes are kept. */
  async retarget(target: WatchTarget): Promise<void> {
    await this.#stopWatching()
    this.target = target
    if (!this.#closed) await this.start()
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#timer) clearTimeout(this.#timer)
    for (const timer of this.#rechecks.values()) clearTimeout(timer)
    await this.#stopWatching()
    await this.#running.catch(() => {})
  }

  async #stopWatching(): Promise<void> {
    for (const folderWatcher of this.#folderWatchers) folderWatcher.close()
    this.#folderWatchers = []
    const watcher = this.#chokidar
    this.#chokidar = null
    await watcher?.close()
  }

  #changed(file: string): void {
    if (this.#closed || !this.target.isWatched(file)) return
    this.#pending.add(file)
    this.#scheduleRecheck(file)
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#timer = null
      // One batch after the other; changes during a batch wait for the next.
      this.#running = this.#running.then(() => this.#report())
    }, this.options.debounceMs)
  }

  #scheduleRecheck(file: string): void {
    clearTimeout(this.#rechecks.get(file))
    const timer = setTimeout(async () => {
      this.#rechecks.delete(file)
      if (this.#closed) return
      if ((await fileSignature(file)) !== this.#reported.get(file)) this.#changed(file)
    }, RECHECK_MS)
    this.#rechecks.set(file, timer)
  }

  async #report(): Promise<void> {
    if (this.#closed || this.#pending.size === 0) return
    const pending = [...this.#pending]
    this.#pending.clear()
    // Several watchers report one write: a version already reported is skipped, so one save gives one batch.
    const changed: string[] = []
    for (const file of pending) {
      const signature = await fileSignature(file)
      if (this.#reported.get(file) === signature) continue
      this.#reported.set(file, signature)
      changed.push(file)
    }
    if (changed.length === 0 || this.#closed) return
    try {
      await this.options.onChange(changed)
    } catch (error) {
      this.options.onError(error instanceof Error ? error.message : String(error))
    }
  }
}
