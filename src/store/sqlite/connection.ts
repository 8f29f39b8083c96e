// Opening a SQLite connection and telling "the database cannot be used now" from other errors.
import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'
import { FlowctlError } from '../../errors.js'

// better-sqlite3 is CommonJS: required, not imported (an `import` makes Node read it twice more first,
// to detect its module format and to lex its exports).
const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3

const BUSY_TIMEOUT_MS = 5000

/**
 * Switching a new file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once (no
 * busy handler) when another process opening the same new file holds a lock: seen with four
 * processes opening one new file together. So it is retried for up to the busy timeout. A file
 * already in WAL mode stays so; only reading the mode then needs no retry.
 */
function enterWal(db: BetterSqlite3.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS
  for (;;) {
    try {
      if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL')
      return
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5) // a synchronous 5 ms pause
    }
  }
}

/** WAL so readers never wait for the writer; NORMAL sync: a commit survives a killed process.
 *  A Buffer (from `serialize()`) opens a private in-memory copy of that database. */
export function openSqliteConnection(file: string | Buffer): BetterSqlite3.Database {
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS })
  try {
    enterWal(db)
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

// Errors that mean "the database cannot be used right now" (another process held the write lock
// past busy_timeout, a full or read-only disk) are STORE_UNAVAILABLE: the server answers 503.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB)/

export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && UNAVAILABLE.test(code)
}

/** The error as callers see it: STORE_UNAVAILABLE for the errors above, anything else unchanged. */
function storeError(error: unknown): unknown {
  if (!isUnavailable(error)) return error
  const code = (error as { code: string }).code
  return new FlowctlError('STORE_UNAVAILABLE', `the embedded database is unavailable (${code}): ${(error as Error).message}`, { cause: error })
}

export function guarded<T>(action: () => T): T {
  try {
    return action()
  } catch (error) {
    throw storeError(error)
  }
}
