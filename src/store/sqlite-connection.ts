// Opening a SQLite connection and telling "the database cannot be used now" from other errors.
// Shared by the store (sqlite.ts) and its writer thread (sqlite-writer-thread.ts), which each hold
// a connection to the same file.
import Database from 'better-sqlite3'
import { FlowctlError } from '../errors.js'

/** WAL so readers never wait for the writer; NORMAL sync: a commit survives a killed process. */
export function openSqliteConnection(file: string): Database.Database {
  const db = new Database(file, { timeout: 5000 })
  try {
    db.pragma('journal_mode = WAL')
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
export function storeError(error: unknown): unknown {
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
