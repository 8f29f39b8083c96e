// Run history in PostgreSQL (SPEC §4, §14): a run's record (with its documents) joins the group
// commit (commit.ts) and the promise resolves once that statement committed and a due trim ran;
// lists never select input and trace.
import type { HistoryPort, RecordedListener, RunDetailsText, RunDocument, RunQuery, RunRecord, StoredRun } from '../../model/store.js'
import { canonicalIso } from '../ids.js'
import { toRunRecord, type RunRow, type StoredRunRow } from '../rows.js'
import { parseRunDetails } from '../run-details.js'
import type { PgWriter } from './commit.js'
import type { PgConnection } from './connection.js'
import { PG_SQL, listRunsQuery, pgDocumentRows, pgRunValues } from './sql.js'

export class PostgresHistory implements HistoryPort {
  constructor(
    private readonly connection: PgConnection,
    private readonly writer: PgWriter,
  ) {}

  /** Group commit: resolves once the statement holding this run and its documents committed (and a due trim ran). */
  async recordRun(run: RunRecord, historyCap: number, details?: RunDetailsText, documents?: readonly RunDocument[]): Promise<void> {
    const { writer } = this
    await writer.writes.add({ kind: 'run', values: pgRunValues(run, details), documents: pgDocumentRows(run.projectId, documents) })
    writer.recorded.notify(run, documents)
    await writer.cap.noteRun(run.projectId, historyCap)
  }

  onRecorded(listener: RecordedListener): () => void {
    return this.writer.recorded.add(listener)
  }

  async listRuns(query: RunQuery): Promise<RunRecord[]> {
    const limit = Math.max(0, Math.floor(query.limit ?? 50))
    const after = query.after === undefined ? undefined : canonicalIso(query.after, 'after')
    const { name, text, values } = listRunsQuery(query.projectId, { flow: query.flow, status: query.status, replayOf: query.replayOf, after }, limit)
    const { rows } = await this.connection.query<RunRow>(name, text, values)
    return rows.map(toRunRecord)
  }

  async getRun(projectId: string, id: string): Promise<StoredRun | null> {
    const { rows } = await this.connection.query<StoredRunRow>('flowctl_get_run', PG_SQL.getRun, [projectId, id])
    const row = rows[0]
    return row ? { ...toRunRecord(row), ...parseRunDetails(row.input, row.trace) } : null
  }

  async countRuns(projectId: string, flows: string[] | null, after: string | null): Promise<{ success: number; error: number }> {
    const allFlows = flows === null || flows.includes('*')
    const { rows } = await this.connection.query<{ status: string; n: string }>('flowctl_count_runs', PG_SQL.countRuns, [
      projectId,
      allFlows ? null : flows,
      after === null ? null : canonicalIso(after, 'after'),
    ])
    const counts = { success: 0, error: 0 }
    for (const row of rows) if (row.status === 'success' || row.status === 'error') counts[row.status] = Number(row.n)
    return counts
  }
}
