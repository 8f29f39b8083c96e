// The PostgreSQL store, for several `serve` instances behind a load balancer. Claims, cursor moves
// and leases are single statements whose WHERE clauses make them safe under concurrency; pg is
// imported lazily so SQLite-only users never load it. This file opens the pool, migrates, and
// composes the ports, one file each (history, documents, schedules, guards, queue).
import { FlowctlError } from '../../errors.js'
import type { Store } from '../../model/store.js'
import { migratePostgres } from '../migrations/postgres.js'
import { PgWriter } from './commit.js'
import { isUnavailable, PgConnection } from './connection.js'
import { PostgresDocuments } from './documents.js'
import { describeServer, hideNames, namesInUrl, unavailableError } from './errors.js'
import { PostgresGuards } from './guards.js'
import { PostgresHistory } from './history.js'
import { PostgresQueue } from './queue.js'
import { PostgresSchedules } from './schedules.js'
import { PostgresWaits } from './waits.js'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface PostgresStoreOptions {
  /** Schema of flowctl's tables (created when missing; the connection's search_path). Default: the server's (public). */
  schema?: string
  /** Move the tables an earlier flowctl made in `public` into `schema` (see migratePostgres). */
  adoptPublicTables?: boolean
  /** The URL comes from a secret: its role and database names are kept out of messages. */
  hideUrlNames?: boolean
}

export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const { schema } = options
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new FlowctlError('USAGE', `schema "${schema}" must be lower-case letters, digits and underscores`)
  }
  if (!URL.canParse(url)) throw new FlowctlError('USAGE', 'the database URL is not a valid postgres:// URL')
  const server = describeServer(url)
  const hidden = options.hideUrlNames ? namesInUrl(url) : []
  const pg = (await import('pg')).default
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    application_name: 'flowctl',
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  })
  // An idle connection dropped by the server (a restart, pg_terminate_backend) emits 'error';
  // unhandled, it would kill the process. The pool discards that client, and the next query opens
  // a new connection or fails with STORE_UNAVAILABLE, which is where it is reported.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))

  const migrate = async () => {
    const client = await pool.connect()
    try {
      await migratePostgres(client, schema, { adoptPublicTables: options.adoptPublicTables })
    } finally {
      client.release()
    }
  }
  try {
    await migrate()
  } catch (error) {
    await pool.end().catch(() => {})
    if (error instanceof FlowctlError) throw error
    if (isUnavailable(error)) throw unavailableError(error, server, hidden)
    throw new FlowctlError('STORE_UNAVAILABLE', `cannot prepare the PostgreSQL database at ${server}: ${hideNames((error as Error).message, hidden)}`)
  }
  return new PostgresStore(new PgConnection(pool, server, hidden, migrate))
}

/** The ports on one pool; history, documents and the queue share the group commit and the history cap (commit.ts). */
class PostgresStore implements Store {
  readonly kind = 'postgres' as const
  readonly history: PostgresHistory
  readonly documents: PostgresDocuments
  readonly schedules: PostgresSchedules
  readonly guards: PostgresGuards
  readonly queue: PostgresQueue
  readonly waits: PostgresWaits
  private readonly writer: PgWriter

  constructor(private readonly connection: PgConnection) {
    this.writer = new PgWriter(connection)
    this.history = new PostgresHistory(connection, this.writer)
    this.documents = new PostgresDocuments(connection, this.writer)
    this.schedules = new PostgresSchedules(connection)
    this.guards = new PostgresGuards(connection.query)
    this.queue = new PostgresQueue(connection.query, this.writer)
    this.waits = new PostgresWaits(
      connection.query,
      (projectId, documents) => this.documents.insertRunDocuments(projectId, documents),
      this.writer.recorded,
      this.writer.cap,
    )
  }

  async close(): Promise<void> {
    const { pool } = this.connection
    if (pool.ended) return
    await Promise.all([this.writer.writes.drain(), this.queue.drain()])
    await this.writer.cap.close()
    if (!pool.ended) await pool.end()
  }
}
