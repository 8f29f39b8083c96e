// The row mapping both stores share: a run's values in column order for an INSERT, and records and
// outbox messages read back from rows. The drivers differ in types only: better-sqlite3 gives text
// (times as canonical ISO text, JSON as text), pg gives Date and parsed jsonb.
import type { OutboxMessage, RunDetailsText, RunRecord } from '../model/store.js'
import { canonicalIso } from './ids.js'

/** The record's columns, in the order of `runValues`. */
export const RUN_COLUMNS = `id, project_id, flow, "trigger", method, started_at, duration_ms, status, http_status, ports, failed_node_id, error, scheduled_for, replay_of, resumed_from`
/** The details of a run (SPEC §14): written with it, read only by getRun. */
export const RUN_DETAIL_COLUMNS = 'input, trace'
/** How many values `runValues` gives: the record's columns, then the details'. */
export const RUN_VALUE_COUNT = 17
/** Where `error` is in `runValues` (PostgreSQL escapes NUL there). */
export const RUN_ERROR_INDEX = 11

type Time = string | Date

export interface RunRow {
  id: string
  project_id: string
  flow: string
  trigger: string
  method: string
  started_at: Time
  duration_ms: number
  status: string
  http_status: number | null
  /** JSON text (SQLite) or parsed jsonb (PostgreSQL). */
  ports: string | RunRecord['ports']
  failed_node_id: string | null
  error: string | null
  scheduled_for: Time | null
  replay_of: string | null
  resumed_from: string | null
}

/** getRun's row: the record and its details. */
export interface StoredRunRow extends RunRow {
  input: string | null
  trace: string | null
}

export interface OutboxRow {
  id: number | string
  project_id: string
  channel: string
  payload: string | Record<string, unknown>
  attempts: number
  last_error: string | null
  created_at: Time
}

const isoOf = (time: Time): string => (typeof time === 'string' ? time : time.toISOString())

/** A run's values in RUN_COLUMNS, RUN_DETAIL_COLUMNS order, times in canonical ISO form. */
export function runValues(run: RunRecord, details: RunDetailsText | undefined): unknown[] {
  return [
    run.id,
    run.projectId,
    run.flow,
    run.trigger,
    run.method,
    canonicalIso(run.startedAt, 'startedAt'),
    run.durationMs,
    run.status,
    run.httpStatus,
    JSON.stringify(run.ports),
    run.failedNodeId,
    run.error,
    run.scheduledFor == null ? null : canonicalIso(run.scheduledFor, 'scheduledFor'),
    run.replayOf,
    run.resumedFrom ?? null,
    details?.input ?? null,
    details?.trace ?? null,
  ]
}

export function toRunRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    flow: row.flow,
    trigger: row.trigger as RunRecord['trigger'],
    method: row.method,
    startedAt: isoOf(row.started_at),
    durationMs: row.duration_ms,
    status: row.status as RunRecord['status'],
    httpStatus: row.http_status,
    ports: typeof row.ports === 'string' ? (JSON.parse(row.ports) as RunRecord['ports']) : row.ports,
    failedNodeId: row.failed_node_id,
    error: row.error,
    scheduledFor: row.scheduled_for === null ? null : isoOf(row.scheduled_for),
    replayOf: row.replay_of,
    // null for rows written before migration 10 read through an older driver's row shape, too.
    resumedFrom: row.resumed_from ?? null,
  }
}

/** Leased messages oldest first (ids are integers in both databases; pg gives bigint as text). */
export function toOutboxMessages(rows: OutboxRow[]): OutboxMessage[] {
  return rows
    .sort((a, b) => Number(a.id) - Number(b.id))
    .map((row) => ({
      id: String(row.id),
      projectId: row.project_id,
      channel: row.channel,
      payload: typeof row.payload === 'string' ? (JSON.parse(row.payload) as Record<string, unknown>) : row.payload,
      attempts: row.attempts,
      lastError: row.last_error,
      createdAt: isoOf(row.created_at),
    }))
}
