// One PostgreSQL pool and how every port runs a statement on it: a lost connection or a database
// that refuses the login is STORE_UNAVAILABLE (naming host:port, never the URL), and a database that
// lost flowctl's tables (dropped and created again while serving) is migrated again, once for all
// the queries that noticed, before the query is retried.
import type { Pool, QueryResultRow } from 'pg'
import { FlowctlError } from '../../errors.js'
import { hideNames, isConnectionError, unavailableError } from './errors.js'

/** How the ports run one named statement (prepared once per connection). */
export type PgQuery = <Row extends QueryResultRow>(name: string, text: string, values: unknown[]) => Promise<{ rows: Row[]; rowCount: number }>

/** A lost connection, or a database that is gone or refuses the login (dropped, or not created again yet). */
export function isUnavailable(error: unknown): boolean {
  return isConnectionError(error) || /^(28|3D)/.test(String((error as { code?: unknown }).code))
}

/** PostgreSQL's codes for a missing table or schema: the database was dropped and created again. */
const MISSING_TABLES = new Set(['42P01', '3F000'])

export class PgConnection {
  /** The running re-migration after the database was recreated, shared by the queries that found it. */
  private remigrating: Promise<void> | null = null

  constructor(
    readonly pool: Pool,
    /** `host:port`, for messages. */
    readonly server: string,
    /** Role and database names kept out of messages (the URL came from a secret). */
    readonly hidden: readonly string[],
    private readonly migrate: () => Promise<void>,
  ) {}

  /** Runs one statement, turning a lost connection into STORE_UNAVAILABLE. Named statements are prepared once per connection. */
  readonly query: PgQuery = async <Row extends QueryResultRow>(name: string, text: string, values: unknown[]) => {
    try {
      const result = await this.pool.query<Row>({ name, text, values })
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    } catch (error) {
      if (isUnavailable(error)) throw this.unavailable(error)
      if (!MISSING_TABLES.has(String((error as { code?: unknown }).code))) throw error
    }
    // The tables are gone (the database was dropped and created again while serving): create them
    // again, once for all the queries that noticed, then try this one again.
    await this.remigrate()
    try {
      const result = await this.pool.query<Row>({ name, text, values })
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    } catch (error) {
      if (isUnavailable(error)) throw this.unavailable(error)
      throw error
    }
  }

  /** STORE_UNAVAILABLE for a connection error, naming the server only. */
  unavailable(error: unknown): FlowctlError {
    return unavailableError(error, this.server, this.hidden)
  }

  private async remigrate(): Promise<void> {
    this.remigrating ??= this.migrate().finally(() => (this.remigrating = null))
    try {
      await this.remigrating
    } catch (error) {
      if (isConnectionError(error)) throw this.unavailable(error)
      throw new FlowctlError(
        'STORE_UNAVAILABLE',
        `flowctl's tables are missing from the PostgreSQL database at ${this.server} and could not be created again: ${hideNames((error as Error).message, this.hidden)}`,
      )
    }
  }
}
