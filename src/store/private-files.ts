// flowctl's local state is private to the user running it (SPEC §19): `.flowctl/` is 0700 and the
// embedded database (with its -wal and -shm files) 0600. Folders and files made by an older flowctl
// (0755, 0644 under the usual umask) are tightened when flowctl opens them. Only the folder named
// `.flowctl` is tightened when it already exists: a database placed elsewhere (`database: file:...`)
// may live in a folder the user shares on purpose. Best effort: a file owned by someone else (or a
// file system without modes) is left as it is.
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs'
import { basename } from 'node:path'

const STATE_FOLDER = '.flowctl'
const PRIVATE_FOLDER_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

/** Creates `dir` (and missing parents) readable by the owner only; an existing `.flowctl` is tightened. */
export function ensurePrivateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_FOLDER_MODE })
  if (basename(dir) === STATE_FOLDER) tighten(dir, PRIVATE_FOLDER_MODE)
}

/** Creates `file` empty with mode 0600 when it is missing (so SQLite never makes it 0644), else tightens it. */
export function ensurePrivateFile(file: string): void {
  // 'a': created when missing, never truncated; safe when several processes open it at once.
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE))
  tighten(file, PRIVATE_FILE_MODE)
}

/** Removes the permission bits beyond `mode` (a missing file is fine). */
export function tighten(path: string, mode: number): void {
  try {
    const current = statSync(path).mode & 0o777
    if ((current & ~mode) !== 0) chmodSync(path, current & mode)
  } catch {
    // Missing, or not ours to change: nothing to do.
  }
}
