// The writer thread of the embedded store under `serve` (driven by sqlite-writer.ts). One thread per
// process holds a connection per database it writes and runs each group commit the main thread
// sends, so BEGIN/COMMIT, the WAL writes and checkpoints never stall the event loop that answers
// requests. Every request carries an id; the answer with that id is 'done', 'committed' or 'error'.
import { parentPort } from 'node:worker_threads'
import type Database from 'better-sqlite3'
import { sqliteBatchCommit, type SqliteWrite } from './sqlite-commit.js'
import { openSqliteConnection } from './sqlite-connection.js'
import { SqliteStatements } from './sqlite-statements.js'
import type { CommitResult } from './write-batch.js'

export interface ThreadError {
  message: string
  code?: string
}

export type ToWriter =
  | { id: number; type: 'open'; connection: number; file: string }
  | { id: number; type: 'commit'; connection: number; items: SqliteWrite[] }
  | { id: number; type: 'close'; connection: number }
export type FromWriter =
  | { id: number; type: 'done' }
  | { id: number; type: 'committed'; failures: [number, ThreadError][] }
  | { id: number; type: 'error'; error: ThreadError }

/** Errors cross the thread boundary as plain data: structured clone would drop SQLite's `code`. */
function toThreadError(error: unknown): ThreadError {
  const code = (error as { code?: unknown } | null)?.code
  return { message: error instanceof Error ? error.message : String(error), ...(typeof code === 'string' ? { code } : {}) }
}

interface Connection {
  db: Database.Database
  commit: (items: SqliteWrite[]) => CommitResult
}

const connections = new Map<number, Connection>()

function handle(message: ToWriter): FromWriter {
  const { id } = message
  if (message.type === 'open') {
    const db = openSqliteConnection(message.file)
    try {
      connections.set(message.connection, { db, commit: sqliteBatchCommit(db, new SqliteStatements(db)) })
    } catch (error) {
      db.close()
      throw error
    }
    return { id, type: 'done' }
  }
  const connection = connections.get(message.connection)
  if (message.type === 'close') {
    connections.delete(message.connection)
    connection?.db.close()
    return { id, type: 'done' }
  }
  if (!connection) throw new Error('the connection is closed')
  const failures = connection.commit(message.items)
  return { id, type: 'committed', failures: failures ? [...failures].map(([index, error]) => [index, toThreadError(error)]) : [] }
}

parentPort?.on('message', (message: ToWriter) => {
  let answer: FromWriter
  try {
    answer = handle(message)
  } catch (error) {
    answer = { id: message.id, type: 'error', error: toThreadError(error) }
  }
  parentPort?.postMessage(answer)
})
