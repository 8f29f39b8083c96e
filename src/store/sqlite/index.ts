// The embedded store: SQLite through better-sqlite3, in WAL mode so `serve`, a crontab `tick` and
// `history` can share one file. better-sqlite3 is synchronous; every write here is one short
// statement or one short IMMEDIATE transaction, and busy_timeout lets other processes wait their turn.
// Runs and documents are group-committed (commit.ts) on the store's own connection. This file opens
// the connection and composes the ports, one file each (history, documents, schedules, guards, queue, waits).
import type Database from 'better-sqlite3'
import { dirname } from 'node:path'
import { FlowctlError } from '../../errors.js'
import type { Store } from '../../model/store.js'
import { SQLITE_MIGRATIONS } from '../migrations/sqlite.js'
import { unappliedMigrations } from '../migrations/runner.js'
import { ensurePrivateFile, ensurePrivateFolder, PRIVATE_FILE_MODE, tighten } from '../private-files.js'
import { SqliteWriter } from './commit.js'
import { openSqliteConnection } from './connection.js'
import { SqliteDocuments } from './documents.js'
import { SqliteGuards } from './guards.js'
import { SqliteHistory } from './history.js'
import { SqliteQueue } from './queue.js'
import { SqliteSchedules } from './schedules.js'
import { SqliteStatements } from './statements.js'
import { SqliteWaits } from './waits.js'

export async function openSqliteStore(file: string): Promise<Store> {
  let db: Database.Database
  try {
    const onDisk = file !== ':memory:' && file !== ''
    if (onDisk) {
      ensurePrivateFolder(dirname(file))
      ensurePrivateFile(file)
    }
    db = openSqliteConnection(file)
    // SQLite makes -wal and -shm with the database's mode; older ones may still be wider.
    if (onDisk) for (const suffix of ['-wal', '-shm']) tighten(file + suffix, PRIVATE_FILE_MODE)
  } catch (error) {
    throw new FlowctlError('STORE_UNAVAILABLE', `cannot open the embedded database ${file}: ${(error as Error).message}`, { cause: error })
  }
  return storeOn(db, file)
}

let migratedImage: Buffer | undefined

/**
 * A new, private in-memory store, as `openSqliteStore(':memory:')` gives, copied (SQLite's
 * serialize/deserialize) from one migrated once per process: `flowctl test` opens one per case, and
 * running every migration each time cost it ~1 ms a case.
 */
export async function openFreshMemoryStore(): Promise<Store> {
  if (!migratedImage) {
    const template = openSqliteConnection(':memory:')
    try {
      migrate(template)
      migratedImage = template.serialize()
    } finally {
      template.close()
    }
  }
  return storeOn(openSqliteConnection(migratedImage), ':memory:')
}

async function storeOn(db: Database.Database, file: string): Promise<Store> {
  try {
    migrate(db)
    return new SqliteStore(db, new SqliteStatements(db))
  } catch (error) {
    db.close()
    throw new FlowctlError('STORE_UNAVAILABLE', `cannot prepare the embedded database ${file}: ${(error as Error).message}`, { cause: error })
  }
}

/** Applies pending migrations inside BEGIN IMMEDIATE, so processes opening at once apply each once. */
function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
  const apply = db.transaction(() => {
    const applied = (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => row.version)
    for (const migration of unappliedMigrations(SQLITE_MIGRATIONS, applied)) {
      db.exec(migration.sql)
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString())
    }
  })
  apply.immediate()
}

/** The ports on one connection; history, documents and the queue share its group commit (commit.ts). */
class SqliteStore implements Store {
  readonly kind = 'sqlite' as const
  readonly history: SqliteHistory
  readonly documents: SqliteDocuments
  readonly schedules: SqliteSchedules
  readonly guards: SqliteGuards
  readonly queue: SqliteQueue
  readonly waits: SqliteWaits
  private readonly writer: SqliteWriter

  constructor(
    private readonly db: Database.Database,
    sql: SqliteStatements,
  ) {
    this.writer = new SqliteWriter(db, sql)
    this.history = new SqliteHistory(sql, this.writer)
    this.documents = new SqliteDocuments(db, sql, this.writer)
    this.schedules = new SqliteSchedules(db, sql)
    this.guards = new SqliteGuards(db)
    this.queue = new SqliteQueue(db, this.writer)
    this.waits = new SqliteWaits(db, (projectId, documents) => this.documents.insertRunDocuments(projectId, documents), this.writer.recorded, this.writer.cap)
  }

  async close(): Promise<void> {
    if (!this.db.open) return
    await this.writer.close()
    if (this.db.open) this.db.close()
  }
}
