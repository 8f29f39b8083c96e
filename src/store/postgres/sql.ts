// The SQL of the PostgreSQL store and its row mappings. Parameters are always positional; JSON
// values are sent as text (pg would turn a JS array into a PostgreSQL array, not JSON).
import type { RunDetailsText, RunDocument, RunRecord } from '../../model/store.js'
import { RUN_COLUMNS, RUN_DETAIL_COLUMNS, RUN_ERROR_INDEX, RUN_VALUE_COUNT, runValues } from '../rows.js'
import { escapeNul, jsonbSafe } from './text.js'

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

/**
 * CTEs inserting documents given as parallel arrays from parameter `first` on: id, project id,
 * collection, body, keep, and with `ofRuns` the run id of each. Rows with `keep` keep a document
 * already stored under their id (RunDocument.keepExisting); the others fail the statement on a
 * duplicate id. With `ofRuns`, only the documents of the runs in the CTE `done` are written.
 */
export function insertDocumentsCte(first: number, ofRuns = false): string {
  const arrays = ['text', 'text', 'text', 'text', 'bool', ...(ofRuns ? ['text'] : [])].map((type, i) => `$${first + i}::${type}[]`).join(', ')
  const names = `id, project_id, collection, body, keep${ofRuns ? ', run_id' : ''}, n`
  const runs = ofRuns ? 'AND d.run_id IN (SELECT id FROM done)' : ''
  // created_at is the insertion order documents come back in (then id): every row of one statement
  // shares now(), and ids are not always time-ordered (an async run's are derived from its run id),
  // so each row gets now() plus its place in the batch, in microseconds.
  const select = (keep: string) =>
    `SELECT d.id, d.project_id, d.collection, d.body::jsonb, now() + (d.n - 1) * interval '1 microsecond' FROM d WHERE ${keep} ${runs} ORDER BY d.n`
  return `d AS (
      SELECT * FROM unnest(${arrays}) WITH ORDINALITY AS d(${names})
    ), docs AS (
      INSERT INTO documents (id, project_id, collection, body, created_at) ${select('NOT d.keep')}
    ), kept AS (
      INSERT INTO documents (id, project_id, collection, body, created_at) ${select('d.keep')} ON CONFLICT (id) DO NOTHING
    )`
}

/** First key of the trim advisory lock (the second is the project id's hash); any number that is ours. */
const TRIM_LOCK_KEY = 4_242_002

/**
 * Run at the start of the trim's transaction (see PostgresStore.trimStatement): the boundary must be
 * read from the index newest first, whatever the table's statistics say.
 */
export const TRIM_PLANNER_SETTINGS = 'SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off'

export const PG_SQL = {
  // Group commit: one statement writes every run and document queued in one event-loop turn (a run
  // with the documents it inserted), as parallel arrays (one prepared statement whatever the batch
  // size). ORDINALITY keeps `seq` in queue order, so ties in startedAt still list in insertion order.
  insertBatch: `WITH ${insertDocumentsCte(RUN_VALUE_COUNT + 1)}
    INSERT INTO runs (${RUN_COLUMNS}, ${RUN_DETAIL_COLUMNS})
    SELECT r.id, r.project_id, r.flow, r.trig, r.method, r.started_at::timestamptz, r.duration_ms, r.status, r.http_status,
      r.ports::jsonb, r.failed_node_id, r.error, r.scheduled_for::timestamptz, r.replay_of, r.resumed_from, r.input, r.trace
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[], $9::int[],
      $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[])
      WITH ORDINALITY AS r(id, project_id, flow, trig, method, started_at, duration_ms, status, http_status, ports, failed_node_id, error,
        scheduled_for, replay_of, resumed_from, input, trace, n)
    ORDER BY r.n`,
  countAllRuns: 'SELECT count(*) AS n FROM runs WHERE project_id = $1',
  // Keeps the newest $2 runs. Only the instance that gets the project's advisory lock (held until
  // this statement's transaction ends) deletes; another one trimming at the same time skips, so two
  // DELETEs of one project never overlap (overlapping DELETEs locking rows in different orders is
  // what deadlocked). It deletes a key range below the $2-th newest run: rows being inserted now
  // are newer, and INSERTs take no locks on existing rows, so it cannot deadlock with them. The
  // boundary is two scalar subqueries so even the generic plan is an index range scan. A run still
  // `waiting` (parked) is never deleted: its record is replaced when it finishes.
  trimRuns: `WITH lock AS (
      SELECT pg_try_advisory_xact_lock(${TRIM_LOCK_KEY}, hashtext($1::text)) AS got
    ), boundary AS (
      SELECT started_at, seq FROM runs WHERE project_id = $1::text ORDER BY started_at DESC, seq DESC OFFSET $2::int - 1 LIMIT 1
    ), deleted AS (
      DELETE FROM runs WHERE (SELECT got FROM lock) AND project_id = $1::text AND status <> 'waiting'
        AND (started_at, seq) < ((SELECT started_at FROM boundary), (SELECT seq FROM boundary))
      RETURNING 1
    )
    SELECT (SELECT got FROM lock) AS got, (SELECT count(*) FROM deleted)::int AS deleted`,
  getRun: `SELECT ${RUN_COLUMNS}, ${RUN_DETAIL_COLUMNS} FROM runs WHERE project_id = $1 AND id = $2`,
  countRuns: `SELECT status, count(*) AS n FROM runs
    WHERE project_id = $1 AND ($2::text[] IS NULL OR flow = ANY($2::text[])) AND ($3::timestamptz IS NULL OR started_at > $3::timestamptz)
    GROUP BY status`,
  getDocument: 'SELECT body FROM documents WHERE project_id = $1 AND collection = $2 AND id = $3',
  claimedMinutes: `SELECT minute FROM schedule_claims WHERE project_id = $1 AND schedule_id = $2 AND minute >= $3::timestamptz AND minute <= $4::timestamptz ORDER BY minute`,
  // Never pruned: a claim is the proof that a minute ran (SPEC §20, see retention.ts).
  claim: `INSERT INTO schedule_claims (project_id, schedule_id, minute) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
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
  filters: { flow?: string; status?: string; replayOf?: string; after?: string },
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
  if (filters.replayOf !== undefined) {
    values.push(filters.replayOf)
    where.push(`replay_of = $${values.length}`)
    shape += '_replays'
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

/** A document row: `body` is jsonb-safe JSON text; `keep` keeps a row already stored under the id. */
export interface PgDocumentRow {
  id: string
  projectId: string
  collection: string
  body: string
  keep: boolean
}

/** A run's documents as rows. */
export function pgDocumentRows(projectId: string, documents: readonly RunDocument[] | undefined): PgDocumentRow[] | undefined {
  if (!documents || documents.length === 0) return undefined
  return documents.map((doc) => ({
    id: doc.id,
    projectId,
    collection: doc.collection,
    body: jsonbSafe(JSON.stringify(doc.document ?? null)),
    keep: doc.keepExisting,
  }))
}

/** Appends document rows to five parallel arrays from `first` on: id, project id, collection, body, keep. */
export function pushDocumentColumns(columns: unknown[][], first: number, documents: readonly PgDocumentRow[]): void {
  for (const doc of documents) {
    columns[first]!.push(doc.id)
    columns[first + 1]!.push(doc.projectId)
    columns[first + 2]!.push(doc.collection)
    columns[first + 3]!.push(doc.body)
    columns[first + 4]!.push(doc.keep)
  }
}

/** runValues, with NUL in the failure reason escaped (PostgreSQL text cannot hold it). */
export function pgRunValues(run: RunRecord, details: RunDetailsText | undefined): unknown[] {
  const values = runValues(run, details)
  const error = values[RUN_ERROR_INDEX]
  if (typeof error === 'string') values[RUN_ERROR_INDEX] = escapeNul(error)
  return values
}
