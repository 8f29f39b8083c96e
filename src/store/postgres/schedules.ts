// What the scheduler keeps in PostgreSQL: minute claims (`ON CONFLICT DO NOTHING`: true for the one
// caller whose row was written), the heartbeat, notification cursors (one statement: a conditional
// UPDATE, or an INSERT for the first value, with the outbox insert in a CTE) and the outbox's leases
// (`FOR UPDATE SKIP LOCKED`).
import type { Heartbeat, OutboxMessage, SchedulesPort } from '../../model/store.js'
import { canonicalIso, parseOutboxId } from '../ids.js'
import { toOutboxMessages, type OutboxRow } from '../rows.js'
import type { PgConnection } from './connection.js'
import { PG_SQL } from './sql.js'
import { escapeNul, jsonbSafe } from './text.js'

export class PostgresSchedules implements SchedulesPort {
  constructor(private readonly connection: PgConnection) {}

  async claimMinute(projectId: string, scheduleId: string, minute: string): Promise<boolean> {
    const at = canonicalIso(minute, 'minute')
    const { rowCount } = await this.connection.query('flowctl_claim', PG_SQL.claim, [projectId, scheduleId, at])
    return rowCount === 1
  }

  async claimedMinutes(projectId: string, scheduleId: string, from: string, to: string): Promise<string[]> {
    const values = [projectId, scheduleId, canonicalIso(from, 'from'), canonicalIso(to, 'to')]
    const { rows } = await this.connection.query<{ minute: Date }>('flowctl_claimed_minutes', PG_SQL.claimedMinutes, values)
    return rows.map((row) => row.minute.toISOString())
  }

  async saveHeartbeat(heartbeat: Heartbeat): Promise<void> {
    await this.connection.query('flowctl_save_heartbeat', PG_SQL.saveHeartbeat, [
      heartbeat.projectId,
      canonicalIso(heartbeat.at, 'at'),
      jsonbSafe(JSON.stringify(heartbeat.summary)),
    ])
  }

  async getHeartbeat(projectId: string): Promise<Heartbeat | null> {
    const { rows } = await this.connection.query<{ at: Date; summary: Record<string, unknown> }>('flowctl_get_heartbeat', PG_SQL.getHeartbeat, [projectId])
    return rows[0] ? { projectId, at: rows[0].at.toISOString(), summary: rows[0].summary } : null
  }

  async getCursor(projectId: string, key: string): Promise<string | null> {
    const { rows } = await this.connection.query<{ value: string }>('flowctl_get_cursor', PG_SQL.getCursor, [projectId, key])
    return rows[0]?.value ?? null
  }

  async advanceCursor(
    projectId: string,
    key: string,
    expected: string | null,
    next: string,
    message: { channel: string; payload: Record<string, unknown> } | null,
  ): Promise<boolean> {
    const name = expected === null ? 'flowctl_cursor_first' : 'flowctl_cursor_move'
    const text = expected === null ? PG_SQL.cursorFirst : PG_SQL.cursorMove
    const { rows } = await this.connection.query<{ moved: number }>(name, text, [
      projectId,
      key,
      next,
      expected,
      message ? message.channel : null,
      message ? jsonbSafe(JSON.stringify(message.payload)) : null,
    ])
    return rows[0]?.moved === 1
  }

  async leaseOutbox(projectId: string, leaseMs: number, now: Date): Promise<OutboxMessage[]> {
    const { rows } = await this.connection.query<OutboxRow>('flowctl_lease', PG_SQL.lease, [projectId, new Date(now.getTime() + leaseMs), now])
    return toOutboxMessages(rows)
  }

  async markDelivered(id: string): Promise<void> {
    const rowId = parseOutboxId(id)
    if (rowId !== null) await this.connection.query('flowctl_mark_delivered', PG_SQL.markDelivered, [String(rowId)])
  }

  async markFailed(id: string, error: string): Promise<void> {
    const rowId = parseOutboxId(id)
    if (rowId !== null) await this.connection.query('flowctl_mark_failed', PG_SQL.markFailed, [String(rowId), escapeNul(error)])
  }
}
