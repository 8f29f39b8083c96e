// The SQL of the PostgreSQL store and its row mappings. Parameters are always positional; JSON
// values are sent as text (pg would turn a JS array into a PostgreSQL array, not JSON).
import type { OutboxMessage, RunRecord } from './types.js'

export interface RunRow {
  id: string
  project_id: string
  flow: string
  trigger: string
  method: string
  started_at: Date
  duration_ms: number
  status: string
  http_status: number | null
  ports: RunRecord['ports']
  failed_node_id: string | null
  error: string | null
}

export interface OutboxRow {
  id: string
  project_id: string
  channel: string
  payload: Record<string, unknown>
  attempts: number
  last_error: string | null
  created_at: Date
}

const RUN_COLUMNS = `id, project_id, flow, "trigger", method, started_at, duration_ms, status, http_status, ports, failed_node_id, error`
const OUTBOX_COLUMNS = 'id, project_id, channel, payload, attempts, last_error, created_at'

// A move of the cursor and the enqueue of its message are one statement: atomic without an explicit
// transaction, and one round trip. The conditional UPDATE re-checks `value` after waiting for a
// concurrent mover's row lock, and ON CONFLICT DO NOTHING waits for a concurrent first insert, so
// exactly one of several racing callers sees `moved = 1`.
const enqueueIfMoved = `
  queued AS (
    INSERT INTO outbox (project_id, channel, payload)
    SELECT $1::text, $5::text, $6::jsonb FROM moved WHERE $5::text IS NOT NULL
  )
  SELECT count(*)::int AS moved FROM moved`

export const PG_SQL = {
  insertRun: `INSERT INTO runs (${RUN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12)`,
  countAllRuns: 'SELECT count(*) AS n FROM runs WHERE project_id = $1',
  trimRuns: `DELETE FROM runs WHERE project_id = $1 AND seq IN
    (SELECT seq FROM runs WHERE project_id = $1 ORDER BY started_at DESC, seq DESC OFFSET $2)`,
  getRun: `SELECT ${RUN_COLUMNS} FROM runs WHERE project_id = $1 AND id = $2`,
  countRuns: `SELECT status, count(*) AS n FROM runs
    WHERE project_id = $1 AND ($2::text[] IS NULL OR flow = ANY($2::text[])) AND ($3::timestamptz IS NULL OR started_at > $3::timestamptz)
    GROUP BY status`,
  insertDocument: 'INSERT INTO documents (id, project_id, collection, body) VALUES ($1, $2, $3, $4::jsonb)',
  getDocument: 'SELECT body FROM documents WHERE project_id = $1 AND collection = $2 AND id = $3',
  // Also prunes this schedule's claims a week older than the claimed minute (see sqlite-statements.ts).
  claim: `WITH pruned AS (
      DELETE FROM schedule_claims WHERE project_id = $1 AND schedule_id = $2 AND minute < $3::timestamptz - interval '7 days'
    )
    INSERT INTO schedule_claims (project_id, schedule_id, minute) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
  saveHeartbeat: `INSERT INTO heartbeats (project_id, at, summary) VALUES ($1, $2, $3::jsonb)
    ON CONFLICT (project_id) DO UPDATE SET at = excluded.at, summary = excluded.summary`,
  getHeartbeat: 'SELECT at, summary FROM heartbeats WHERE project_id = $1',
  getCursor: 'SELECT value FROM cursors WHERE project_id = $1 AND key = $2',
  cursorFirst: `WITH moved AS (
      INSERT INTO cursors (project_id, key, value) SELECT $1::text, $2::text, $3::text WHERE $4::text IS NULL
      ON CONFLICT DO NOTHING RETURNING 1
    ), ${enqueueIfMoved}`,
  cursorMove: `WITH moved AS (
      UPDATE cursors SET value = $3::text WHERE project_id = $1::text AND key = $2::text AND value = $4::text RETURNING 1
    ), ${enqueueIfMoved}`,
  // SKIP LOCKED: a message another instance is leasing right now is passed over, never leased twice.
  lease: `UPDATE outbox SET lease_until = $2 WHERE id IN (
      SELECT id FROM outbox
      WHERE project_id = $1 AND delivered_at IS NULL AND (lease_until IS NULL OR lease_until < $3)
      ORDER BY id FOR UPDATE SKIP LOCKED
    ) RETURNING ${OUTBOX_COLUMNS}`,
  markDelivered: 'UPDATE outbox SET delivered_at = now(), lease_until = NULL WHERE id = $1',
  markFailed: 'UPDATE outbox SET attempts = attempts + 1, last_error = $2, lease_until = NULL WHERE id = $1 AND delivered_at IS NULL',
}

/** The listRuns query for this combination of filters; each shape has its own prepared name. */
export function listRunsQuery(
  projectId: string,
  filters: { flow?: string; status?: string; after?: string },
  limit: number,
): { name: string; text: string; values: unknown[] } {
  const values: unknown[] = [projectId]
  const where = ['project_id = $1']
  let shape = 'flowctl_list_runs'
  if (filters.flow !== undefined) {
    values.push(filters.flow)
    where.push(`flow = $${values.length}`)
    shape += '_flow'
  }
  if (filters.status !== undefined) {
    values.push(filters.status)
    where.push(`status = $${values.length}`)
    shape += '_status'
  }
  if (filters.after !== undefined) {
    values.push(filters.after)
    where.push(`started_at > $${values.length}::timestamptz`)
    shape += '_after'
  }
  values.push(limit)
  const text = `SELECT ${RUN_COLUMNS} FROM runs WHERE ${where.join(' AND ')} ORDER BY started_at DESC, seq DESC LIMIT $${values.length}`
  return { name: shape, text, values }
}

export function toRunRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    flow: row.flow,
    trigger: row.trigger as RunRecord['trigger'],
    method: row.method,
    startedAt: row.started_at.toISOString(),
    durationMs: row.duration_ms,
    status: row.status as RunRecord['status'],
    httpStatus: row.http_status,
    ports: row.ports,
    failedNodeId: row.failed_node_id,
    error: row.error,
  }
}

export function toOutboxMessage(row: OutboxRow): OutboxMessage {
  return {
    id: String(row.id),
    projectId: row.project_id,
    channel: row.channel,
    payload: row.payload,
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
  }
}
