// The PostgreSQL group commit of runs and documents, and the history cap, shared by the ports that
// write them (history, documents; the queue's finishes have their own statement but share the cap
// and the recorded listeners). Every queued run and document of a batch is one multi-row
// `INSERT ... SELECT FROM unnest(...)` statement (PG_SQL.insertBatch), at most 2 in flight.
import { FlowctlError } from '../../errors.js'
import { HistoryCap } from '../history-cap.js'
import { RecordedListeners } from '../recorded.js'
import { RUN_VALUE_COUNT } from '../rows.js'
import { WriteBatcher } from '../write-batch.js'
import type { PgConnection } from './connection.js'
import { PG_SQL, TRIM_PLANNER_SETTINGS, pushDocumentColumns, type PgDocumentRow } from './sql.js'

/** A run (its values, pgRunValues) with the documents it inserted, or documents alone, waiting for the next group commit. */
export type PgWrite = { kind: 'run'; values: unknown[]; documents: PgDocumentRow[] | undefined } | { kind: 'documents'; documents: PgDocumentRow[] }

/** Group commits running at once; writes arriving meanwhile join the next one. */
export const MAX_COMMITS_IN_FLIGHT = 2

export class PgWriter {
  readonly writes = new WriteBatcher<PgWrite>((items) => this.commitWrites(items), MAX_COMMITS_IN_FLIGHT)
  // The history cap (history-cap.ts); this dialect's part is the count and the trim statement.
  readonly cap = new HistoryCap({
    countRuns: async (projectId) =>
      Number((await this.connection.query<{ n: string }>('flowctl_count_all_runs', PG_SQL.countAllRuns, [projectId])).rows[0]?.n ?? 0),
    deleteBelowBoundary: (projectId, keep) => this.trimStatement(projectId, keep),
  })
  readonly recorded = new RecordedListeners()

  constructor(private readonly connection: PgConnection) {}

  /** One statement (one autocommit transaction) for every queued run and document. */
  private async commitWrites(items: PgWrite[]): Promise<Map<number, unknown> | undefined> {
    const { query } = this.connection
    try {
      await query('flowctl_insert_batch', PG_SQL.insertBatch, batchValues(items))
      return undefined
    } catch (error) {
      if (items.length === 1 || (error instanceof FlowctlError && error.code === 'STORE_UNAVAILABLE')) throw error
    }
    // A row's own error (say, a duplicate id) failed the whole statement: write the rows one by
    // one, so only the callers whose rows fail get an error.
    const failures = new Map<number, unknown>()
    for (const [index, item] of items.entries()) {
      try {
        await query('flowctl_insert_batch', PG_SQL.insertBatch, batchValues([item]))
      } catch (error) {
        failures.set(index, error)
      }
    }
    return failures
  }

  /**
   * Deletes the project's runs below its `keep`-th newest, in a transaction of its own; false when
   * another instance held the project's trim lock (PG_SQL.trimRuns). Its boundary must
   * be read from the index, newest first (~cap entries). On a young table, before autoanalyze saw it
   * grow, the planner estimated ~150 rows and chose a bitmap scan of the whole project, dead rows
   * included, plus a sort: 21–65 ms per trim instead of ~3, which made the database the Run API's
   * bottleneck. So the trim's transaction turns sorts and bitmap scans off for itself.
   */
  private async trimStatement(projectId: string, keep: number): Promise<boolean> {
    const client = await this.connection.pool.connect() // a failure is caught by HistoryCap, like any other
    try {
      await client.query(`BEGIN; ${TRIM_PLANNER_SETTINGS}`)
      const { rows } = await client.query<{ got: boolean }>({ name: 'flowctl_trim_runs', text: PG_SQL.trimRuns, values: [projectId, keep] })
      await client.query('COMMIT')
      return rows[0]?.got === true
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
  }
}

/** The parallel arrays of PG_SQL.insertBatch: the run columns (RUN_VALUE_COUNT), then 5 document columns. */
function batchValues(items: PgWrite[]): unknown[][] {
  const columns: unknown[][] = Array.from({ length: RUN_VALUE_COUNT + 5 }, () => [])
  for (const item of items) {
    if (item.kind === 'run') item.values.forEach((value, i) => columns[i]!.push(value))
    if (item.documents) pushDocumentColumns(columns, RUN_VALUE_COUNT, item.documents)
  }
  return columns
}
