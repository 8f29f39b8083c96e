// What the scheduler keeps in SQLite: minute claims (`INSERT OR IGNORE`: true for the one caller
// whose row was written), the heartbeat, notification cursors (compare-and-set plus the outbox insert
// under one write lock) and the outbox's leases.
import type Database from 'better-sqlite3'
import type { Heartbeat, OutboxMessage, SchedulesPort } from '../../model/store.js'
import { canonicalIso, parseOutboxId } from '../ids.js'
import { toOutboxMessages, type OutboxRow } from '../rows.js'
import { guarded } from './connection.js'
import type { SqliteStatements } from './statements.js'

type OutboxNote = { channel: string; payload: Record<string, unknown> } | null

export class SqliteSchedules implements SchedulesPort {
  private readonly advance: (projectId: string, key: string, expected: string | null, next: string, message: OutboxNote) => boolean

  constructor(
    db: Database.Database,
    private readonly sql: SqliteStatements,
  ) {
    const cas = db.transaction((projectId: string, key: string, expected: string | null, next: string, message: OutboxNote) => {
      const current = (sql.getCursor.get(projectId, key) as { value: string } | undefined)?.value ?? null
      if (current !== expected) return false
      sql.setCursor.run(projectId, key, next)
      if (message) sql.enqueue.run(projectId, message.channel, JSON.stringify(message.payload), new Date().toISOString())
      return true
    })
    // IMMEDIATE: the read and the write happen under one write lock, so two processes cannot both win.
    this.advance = (...args) => cas.immediate(...args)
  }

  async claimMinute(projectId: string, scheduleId: string, minute: string): Promise<boolean> {
    const at = canonicalIso(minute, 'minute')
    return guarded(() => this.sql.claim.run(projectId, scheduleId, at, new Date().toISOString()).changes === 1)
  }

  async claimedMinutes(projectId: string, scheduleId: string, from: string, to: string): Promise<string[]> {
    const range = [canonicalIso(from, 'from'), canonicalIso(to, 'to')]
    return guarded(() => (this.sql.claimedMinutes.all(projectId, scheduleId, ...range) as { minute: string }[]).map((row) => row.minute))
  }

  async saveHeartbeat(heartbeat: Heartbeat): Promise<void> {
    const at = canonicalIso(heartbeat.at, 'at')
    guarded(() => this.sql.saveHeartbeat.run(heartbeat.projectId, at, JSON.stringify(heartbeat.summary)))
  }

  async getHeartbeat(projectId: string): Promise<Heartbeat | null> {
    const row = guarded(() => this.sql.getHeartbeat.get(projectId) as { at: string; summary: string } | undefined)
    return row ? { projectId, at: row.at, summary: JSON.parse(row.summary) as Record<string, unknown> } : null
  }

  async getCursor(projectId: string, key: string): Promise<string | null> {
    return guarded(() => this.sql.getCursor.get(projectId, key) as { value: string } | undefined)?.value ?? null
  }

  async advanceCursor(projectId: string, key: string, expected: string | null, next: string, message: OutboxNote): Promise<boolean> {
    return guarded(() => this.advance(projectId, key, expected, next, message))
  }

  async leaseOutbox(projectId: string, leaseMs: number, now: Date): Promise<OutboxMessage[]> {
    const rows = guarded(() => this.sql.lease.all(now.getTime() + leaseMs, projectId, now.getTime()) as OutboxRow[])
    return toOutboxMessages(rows)
  }

  async markDelivered(id: string): Promise<void> {
    const rowId = parseOutboxId(id)
    if (rowId !== null) guarded(() => this.sql.markDelivered.run(new Date().toISOString(), rowId))
  }

  async markFailed(id: string, error: string): Promise<void> {
    const rowId = parseOutboxId(id)
    if (rowId !== null) guarded(() => this.sql.markFailed.run(error, rowId))
  }
}
