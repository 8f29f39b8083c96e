// Every SQL statement of the SQLite store, prepared once per connection. listRuns has a few
// shapes (with or without each filter); each shape is prepared the first time it is used.
import type Database from 'better-sqlite3'
import { RUN_COLUMNS, RUN_DETAIL_COLUMNS, RUN_VALUE_COUNT } from '../rows.js'

const RUN_VALUE_PLACEHOLDERS = Array.from({ length: RUN_VALUE_COUNT }, () => '?').join(', ')

/** Column order of the values of an inserted document (see SqliteWrite); runs: rows.ts. */
const DOCUMENT_COLUMNS = 'id, project_id, collection, body, created_at'
const OUTBOX_COLUMNS = 'id, project_id, channel, payload, attempts, last_error, created_at'

export interface RunFilters {
  flow?: string
  status?: string
  replayOf?: string
  after?: string
}

export class SqliteStatements {
  readonly insertRun: Database.Statement
  readonly countAllRuns: Database.Statement
  readonly trimRuns: Database.Statement
  readonly getRun: Database.Statement
  readonly countRuns: Database.Statement
  readonly insertDocument: Database.Statement
  /** The same, keeping a document already stored under the id (RunDocument.keepExisting). */
  readonly insertDocumentIfAbsent: Database.Statement
  readonly getDocument: Database.Statement
  readonly claim: Database.Statement
  readonly claimedMinutes: Database.Statement
  readonly saveHeartbeat: Database.Statement
  readonly getHeartbeat: Database.Statement
  readonly getCursor: Database.Statement
  readonly setCursor: Database.Statement
  readonly enqueue: Database.Statement
  readonly lease: Database.Statement
  readonly markDelivered: Database.Statement
  readonly markFailed: Database.Statement
  private readonly listShapes = new Map<string, Database.Statement>()

  constructor(private readonly db: Database.Database) {
    this.insertRun = db.prepare(`INSERT INTO runs (${RUN_COLUMNS}, ${RUN_DETAIL_COLUMNS}) VALUES (${RUN_VALUE_PLACEHOLDERS})`)
    this.countAllRuns = db.prepare('SELECT count(*) AS n FROM runs WHERE project_id = ?')
    // The history cap's trim (history-cap.ts): the project's runs below its `keep`-th newest (the
    // boundary, by started_at then rowid), an index range of the project only. Fewer runs than
    // `keep`: the boundary is NULL and nothing is deleted. A run still `waiting` (parked) is never
    // deleted: its record is replaced when it finishes. Parameters: project, project, keep.
    this.trimRuns = db.prepare(`DELETE FROM runs WHERE project_id = ? AND status <> 'waiting' AND (started_at, rowid) <
      (SELECT started_at, rowid FROM runs WHERE project_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1 OFFSET ? - 1)`)
    this.getRun = db.prepare(`SELECT ${RUN_COLUMNS}, ${RUN_DETAIL_COLUMNS} FROM runs WHERE project_id = ? AND id = ?`)
    this.countRuns = db.prepare(`SELECT status, count(*) AS n FROM runs
      WHERE project_id = @project_id
        AND (@all_flows = 1 OR flow IN (SELECT value FROM json_each(@flows)))
        AND (@after IS NULL OR started_at > @after)
      GROUP BY status`)
    this.insertDocument = db.prepare(`INSERT INTO documents (${DOCUMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?)`)
    this.insertDocumentIfAbsent = db.prepare(`INSERT INTO documents (${DOCUMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
    this.getDocument = db.prepare('SELECT body FROM documents WHERE project_id = ? AND collection = ? AND id = ?')
    this.claim = db.prepare('INSERT OR IGNORE INTO schedule_claims (project_id, schedule_id, minute, claimed_at) VALUES (?, ?, ?, ?)')
    this.claimedMinutes = db.prepare(
      'SELECT minute FROM schedule_claims WHERE project_id = ? AND schedule_id = ? AND minute >= ? AND minute <= ? ORDER BY minute',
    )
    this.saveHeartbeat = db.prepare(`INSERT INTO heartbeats (project_id, at, summary) VALUES (?, ?, ?)
      ON CONFLICT (project_id) DO UPDATE SET at = excluded.at, summary = excluded.summary`)
    this.getHeartbeat = db.prepare('SELECT at, summary FROM heartbeats WHERE project_id = ?')
    this.getCursor = db.prepare('SELECT value FROM cursors WHERE project_id = ? AND key = ?')
    this.setCursor = db.prepare(`INSERT INTO cursors (project_id, key, value) VALUES (?, ?, ?)
      ON CONFLICT (project_id, key) DO UPDATE SET value = excluded.value`)
    this.enqueue = db.prepare('INSERT INTO outbox (project_id, channel, payload, created_at) VALUES (?, ?, ?, ?)')
    // One UPDATE both selects and leases, so two callers can never lease the same message.
    this.lease = db.prepare(`UPDATE outbox SET lease_until = ?
      WHERE project_id = ? AND delivered_at IS NULL AND (lease_until IS NULL OR lease_until < ?)
      RETURNING ${OUTBOX_COLUMNS}`)
    this.markDelivered = db.prepare('UPDATE outbox SET delivered_at = ?, lease_until = NULL WHERE id = ?')
    this.markFailed = db.prepare(`UPDATE outbox SET attempts = attempts + 1, last_error = ?, lease_until = NULL
      WHERE id = ? AND delivered_at IS NULL`)
  }

  /** The listRuns statement for this combination of filters, with its parameters. */
  listRuns(projectId: string, filters: RunFilters, limit: number): { statement: Database.Statement; params: Record<string, unknown> } {
    const params: Record<string, unknown> = { project_id: projectId, limit }
    const where = ['project_id = @project_id']
    for (const name of ['flow', 'status'] as const) {
      if (filters[name] === undefined) continue
      where.push(`${name} = @${name}`)
      params[name] = filters[name]
    }
    if (filters.replayOf !== undefined) {
      where.push('replay_of = @replay_of')
      params.replay_of = filters.replayOf
    }
    if (filters.after !== undefined) {
      where.push('started_at > @after')
      params.after = filters.after
    }
    const sql = `SELECT ${RUN_COLUMNS} FROM runs WHERE ${where.join(' AND ')} ORDER BY started_at DESC, rowid DESC LIMIT @limit`
    let statement = this.listShapes.get(sql)
    if (!statement) {
      statement = this.db.prepare(sql)
      this.listShapes.set(sql, statement)
    }
    return { statement, params }
  }
}
