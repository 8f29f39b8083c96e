// Run history in SQLite (SPEC §4, §14): a run's record (with its documents) is queued for the group
// commit (commit.ts) and the promise resolves once that transaction committed; lists never read
// input and trace. The history cap (history-cap.ts) trims inside the same group commit.
import type { HistoryPort, RecordedListener, RunDetailsText, RunDocument, RunQuery, RunRecord, StoredRun } from '../../model/store.js'
import { canonicalIso } from '../ids.js'
import { runValues, toRunRecord, type RunRow, type StoredRunRow } from '../rows.js'
import { parseRunDetails } from '../run-details.js'
import { documentRows, type SqliteWriter } from './commit.js'
import { guarded } from './connection.js'
import type { SqliteStatements } from './statements.js'

export class SqliteHistory implements HistoryPort {
  constructor(
    private readonly sql: SqliteStatements,
    private readonly writer: SqliteWriter,
  ) {}

  /** Group commit: resolves once the transaction holding this run, its documents (and a trim it made due) committed. */
  async recordRun(run: RunRecord, historyCap: number, details?: RunDetailsText, documents?: readonly RunDocument[]): Promise<void> {
    const { writer } = this
    const rows = documentRows(run.projectId, documents)
    const written = writer.writes.add({ kind: 'run', values: runValues(run, details), ...(rows ? { documents: rows } : {}) })
    const trimmed = writer.cap.noteRun(run.projectId, historyCap) // never rejects
    await written
    writer.recorded.notify(run, documents)
    if (trimmed) await trimmed
  }

  onRecorded(listener: RecordedListener): () => void {
    return this.writer.recorded.add(listener)
  }

  async listRuns(query: RunQuery): Promise<RunRecord[]> {
    const limit = Math.max(0, Math.floor(query.limit ?? 50))
    const after = query.after === undefined ? undefined : canonicalIso(query.after, 'after')
    const { statement, params } = this.sql.listRuns(query.projectId, { flow: query.flow, status: query.status, replayOf: query.replayOf, after }, limit)
    return guarded(() => statement.all(params) as RunRow[]).map(toRunRecord)
  }

  async getRun(projectId: string, id: string): Promise<StoredRun | null> {
    const row = guarded(() => this.sql.getRun.get(projectId, id) as StoredRunRow | undefined)
    return row ? { ...toRunRecord(row), ...parseRunDetails(row.input, row.trace) } : null
  }

  async countRuns(projectId: string, flows: string[] | null, after: string | null): Promise<{ success: number; error: number }> {
    const allFlows = flows === null || flows.includes('*')
    const rows = guarded(
      () =>
        this.sql.countRuns.all({
          project_id: projectId,
          all_flows: allFlows ? 1 : 0,
          flows: JSON.stringify(allFlows ? [] : flows),
          after: after === null ? null : canonicalIso(after, 'after'),
        }) as { status: string; n: number }[],
    )
    const counts = { success: 0, error: 0 }
    for (const row of rows) if (row.status === 'success' || row.status === 'error') counts[row.status] = row.n
    return counts
  }
}
