// The one file watcher of flowctl, shared by `serve` (reloads) and `flowctl test --watch` (reruns).
// It watches folders, never single files: chokidar follows the folder tree (its `ignored` skips every
// file, so it opens no watch per file: 1,000 flows would cost 1,000 watchers), and a plain fs.watch
// on each of those folders reports every name written, added, removed or renamed in it; a stat
// re-check after each event catches the last of several quick writes.
// Editors' "safe write" replaces a file by renaming a temporary one over it: a watch on the file's
// old inode would see nothing more, while the folder watch reports the name again. A folder that
// appears is watched and its files are reported (they are new); a folder that goes is reported
// itself (`isWatchedFolder` says whether that counts). Changes are batched for `debounceMs`, dropped
// when the file's version on disk (inode, size, mtime) was already reported, and handed over one
// batch at a time.
import { watch as watchFolder, type FSWatcher as FolderWatcher } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
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
  /** The folder whose tree chokidar follows, minus what `ignored` says (files are always skipped). */
  dir: string
  /** Folders watched even outside `dir` (missing ones are skipped until chokidar sees them appear). */
  folders: string[]
  /** Absolute paths of the files whose changes count. */
  isWatched(file: string): boolean
  /** Folders whose appearance or removal counts as a change of the folder itself. */
  isWatchedFolder(folder: string): boolean
  /** Which folders to leave out (called with and without stats; a path without stats may be a file). */
  ignored(path: string, stats?: { isDirectory(): boolean }): boolean
}

function isInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder + sep)
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
   * One plain watch per folder: it sees every write to a file in it, where chokidar's own watch per
   * file now and then reports nothing (the reload benchmark's chokidar-only baseline misses about one
   * write in ten) and costs a watcher per file.
   */
  #folderWatchers = new Map<string, FolderWatcher>()
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

  /** Resolves once chokidar has read the folder tree: writes after that are seen. */
  async start(): Promise<void> {
    const { watch } = await import('chokidar')
    const { ignored } = this.target
    // Files are never chokidar's: only folders (and paths without stats that may be folders) pass.
    const skip = (path: string, stats?: { isDirectory(): boolean }) => (stats !== undefined && !stats.isDirectory()) || ignored(path, stats)
    const watcher = watch(this.target.dir, { ignoreInitial: true, awaitWriteFinish: false, ignored: skip })
    watcher.on('addDir', (path) => void this.#folderAppeared(resolve(path)))
    watcher.on('unlinkDir', (path) => this.#folderGone(resolve(path)))
    watcher.on('error', (error) => this.options.onError(error instanceof Error ? error.message : String(error)))
    await new Promise<void>((ready) => watcher.once('ready', () => ready()))
    this.#chokidar = watcher
    const dir = resolve(this.target.dir)
    const tree = Object.keys(watcher.getWatched()).map((folder) => resolve(folder))
    for (const folder of new Set([...this.target.folders.map((f) => resolve(f)), ...tree.filter((f) => isInside(f, dir))])) this.#watchFolder(folder)
  }

  /** A plain watch on `folder`, replacing an earlier one (a folder removed and made again). */
  #watchFolder(folder: string): boolean {
    this.#folderWatchers.get(folder)?.close()
    this.#folderWatchers.delete(folder)
    try {
      const folderWatcher = watchFolder(folder, (_event, name) => {
        if (name) this.#changed(join(folder, name.toString()))
      })
      folderWatcher.on('error', () => folderWatcher.close()) // the folder went away; chokidar reports it
      this.#folderWatchers.set(folder, folderWatcher)
      return true
    } catch {
      return false // No such folder (yet): chokidar sees it appear.
    }
  }

  /** A new folder: watched from now on; the files already in it are new, so reported. */
  async #folderAppeared(folder: string): Promise<void> {
    if (this.#closed || !this.#watchFolder(folder)) return
    if (this.target.isWatchedFolder(folder)) this.#changed(folder, true)
    const names = await readdir(folder).catch(() => [])
    for (const name of names) this.#changed(join(folder, name))
  }

  #folderGone(folder: string): void {
    this.#folderWatchers.get(folder)?.close()
    this.#folderWatchers.delete(folder)
    if (this.target.isWatchedFolder(folder)) this.#changed(folder, true)
    // A folder removed and another renamed into its place at once (`rm -r flows && mv old flows`):
    // chokidar can report the removal after the arrival, or not report the arrival at all.
    const timer = setTimeout(async () => {
      if (this.#closed || this.#folderWatchers.has(folder)) return
      const back = await stat(folder).then(
        (stats) => stats.isDirectory(),
        () => false,
      )
      if (back && !this.#folderWatchers.has(folder)) await this.#folderAppeared(folder)
    }, RECHECK_MS)
    timer.unref()
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
    for (const folderWatcher of this.#folderWatchers.values()) folderWatcher.close()
    this.#folderWatchers.clear()
    const watcher = this.#chokidar
    this.#chokidar = null
    await watcher?.close()
  }

  /** `folder`: `file` is a folder that appeared or went (already checked by `isWatchedFolder`). */
  #changed(file: string, folder = false): void {
    if (this.#closed || (!folder && !this.target.isWatched(file))) return
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
