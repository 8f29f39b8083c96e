// The writer thread of the embedded store under `serve` (started by sqlite-writer.ts). It holds its
// own connection to the database file and runs each group commit the main thread sends it, so the
// BEGIN/COMMIT, the WAL writes and checkpoints never stall the event loop that answers requests.
// Messages: in { type: 'commit', id, items } | { type: 'close' };
// out { type: 'ready' } | { type: 'committed', id, failures } | { type: 'failed', id, error } | { type: 'closed' }.
import { parentPort, workerData } from 'node:worker_threads'
import type Database from 'better-sqlite3'
import { sqliteBatchCommit, type SqliteWrite } from './sqlite-commit.js'
import { openSqliteConnection } from './sqlite-connection.js'
import { SqliteStatements } from './sqlite-statements.js'

export interface ThreadError {
  message: string
  code?: string
}

export type ToWriter = { type: 'commit'; id: number; items: SqliteWrite[] } | { type: 'close' }
export type FromWriter =
  | { type: 'ready' }
  | { type: 'open-failed'; error: ThreadError }
  | { type: 'committed'; id: number; failures: [number, ThreadError][] }
  | { type: 'failed'; id: number; error: ThreadError }
  | { type: 'closed' }

/** Errors cross the thread boundary as plain data: structured clone would drop SQLite's `code`. */
function toThreadError(error: unknown): ThreadError {
  const code = (error as { code?: unknown } | null)?.code
  return { message: error instanceof Error ? error.message : String(error), ...(typeof code === 'string' ? { code } : {}) }
}

const port = parentPort
if (port) {
  const send = (message: FromWriter) => port.postMessage(message)
  let db: Database.Database | undefined
  try {
    db = openSqliteConnection((workerData as { file: string }).file)
    const commit = sqliteBatchCommit(db, new SqliteStatements(db))
    port.on('message', (message: ToWriter) => {
      if (message.type === 'close') {
        db?.close()
        send({ type: 'closed' })
        port.close()
        return
      }
      try {
        const failures = commit(message.items)
        send({ type: 'committed', id: message.id, failures: failures ? [...failures].map(([index, error]) => [index, toThreadError(error)]) : [] })
      } catch (error) {
        send({ type: 'failed', id: message.id, error: toThreadError(error) })
      }
    })
    send({ type: 'ready' })
  } catch (error) {
    db?.close()
    send({ type: 'open-failed', error: toThreadError(error) })
    port.close()
  }
}
