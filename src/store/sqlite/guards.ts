// SPEC §12's guards on SQLite. Claims run in IMMEDIATE transactions on the store's connection, so
// several processes on one file (serve, a crontab tick) take turns under SQLite's write lock and
// never both win. Leases and expiry are epoch ms of the caller's clock: one machine, one clock.
import type Database from 'better-sqlite3'
import { randomUUID } from 'node:crypto'
import { guarded } from './connection.js'
import {
  GUARD_PRUNE_INTERVAL_MS,
  type GuardStore,
  type IdempotencyClaim,
  type IdempotencyClaimRequest,
  type IdempotencyKeyRef,
  type StoredResponse,
} from '../../model/guard-types.js'

interface KeyRow {
  fingerprint: string
  token: string
  state: string
  lease_until: number
  expires_at: number
  status: number | null
  headers: string | null
  body: string | null
}

export class SqliteGuards implements GuardStore {
  private readonly claimKey: (request: IdempotencyClaimRequest, now: number) => IdempotencyClaim
  private readonly takeSlot: (projectId: string, flow: string, limit: number, leaseMs: number, now: number) => string | null
  private readonly statements: Record<
    | 'getKey'
    | 'putKey'
    | 'completeKey'
    | 'releaseKey'
    | 'pruneKeys'
    | 'seedSlot'
    | 'freeSlot'
    | 'takeFreeSlot'
    | 'releaseSlot'
    | 'heldSlots'
    | 'addHits'
    | 'pruneHits'
    | 'claimSignature'
    | 'pruneSignatures',
    Database.Statement
  >
  private lastKeyPrune = 0
  private lastHitPrune = 0
  private lastSignaturePrune = 0

  constructor(db: Database.Database) {
    const s = (sql: string) => db.prepare(sql)
    this.statements = {
      getKey: s(
        'SELECT fingerprint, token, state, lease_until, expires_at, status, headers, body FROM idempotency_keys WHERE project_id = ? AND flow = ? AND caller = ? AND idem_key = ?',
      ),
      putKey: s(`INSERT OR REPLACE INTO idempotency_keys (project_id, flow, caller, idem_key, fingerprint, token, state, lease_until, expires_at)
                 VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)`),
      completeKey: s(`UPDATE idempotency_keys SET state = 'done', status = ?, headers = ?, body = ?
                      WHERE project_id = ? AND flow = ? AND caller = ? AND idem_key = ? AND token = ?`),
      releaseKey: s('DELETE FROM idempotency_keys WHERE project_id = ? AND flow = ? AND caller = ? AND idem_key = ? AND token = ?'),
      pruneKeys: s(`DELETE FROM idempotency_keys WHERE expires_at <= ? AND (state = 'done' OR lease_until <= ?)`),
      seedSlot: s('INSERT OR IGNORE INTO flow_slots (project_id, flow, slot) VALUES (?, ?, ?)'),
      freeSlot: s(`SELECT slot FROM flow_slots WHERE project_id = ? AND flow = ? AND slot < ? AND (holder IS NULL OR lease_until <= ?)
                   ORDER BY slot LIMIT 1`),
      takeFreeSlot: s('UPDATE flow_slots SET holder = ?, lease_until = ? WHERE project_id = ? AND flow = ? AND slot = ?'),
      releaseSlot: s('UPDATE flow_slots SET holder = NULL, lease_until = NULL WHERE project_id = ? AND flow = ? AND holder = ?'),
      heldSlots: s('SELECT count(*) AS n FROM flow_slots WHERE project_id = ? AND flow = ? AND holder IS NOT NULL AND lease_until > ?'),
      addHits: s(`INSERT INTO rate_counts (project_id, ip, window_start, hits) VALUES (?, ?, ?, ?)
                  ON CONFLICT (project_id, ip, window_start) DO UPDATE SET hits = hits + excluded.hits RETURNING hits`),
      pruneHits: s('DELETE FROM rate_counts WHERE window_start < ?'),
      // One statement (atomic under SQLite's write lock): taken when absent or when the earlier record expired.
      claimSignature: s(`INSERT INTO used_signatures (project_id, flow, signature, expires_at) VALUES (?, ?, ?, ?)
                         ON CONFLICT (project_id, flow, signature) DO UPDATE SET expires_at = excluded.expires_at
                         WHERE used_signatures.expires_at <= ? RETURNING 1 AS taken`),
      pruneSignatures: s('DELETE FROM used_signatures WHERE expires_at < ?'),
    }
    const st = this.statements
    // Read and write under one write lock: the check and the claim cannot interleave with another process's.
    const claim = db.transaction((request: IdempotencyClaimRequest, now: number): IdempotencyClaim => {
      const { projectId, flow, caller, key } = request
      const row = st.getKey.get(projectId, flow, caller, key) as KeyRow | undefined
      const takeable = !row || row.expires_at <= now || (row.state === 'running' && row.lease_until <= now)
      if (takeable) {
        const token = randomUUID()
        st.putKey.run(projectId, flow, caller, key, request.fingerprint, token, now + request.leaseMs, now + request.ttlMs)
        return { kind: 'claimed', token }
      }
      if (row.fingerprint !== request.fingerprint) return { kind: 'mismatch' }
      if (row.state !== 'done') return { kind: 'in-flight' }
      return { kind: 'replay', response: storedResponse(row) }
    })
    this.claimKey = (request, now) => claim.immediate(request, now)
    const take = db.transaction((projectId: string, flow: string, limit: number, leaseMs: number, now: number): string | null => {
      let free = st.freeSlot.get(projectId, flow, limit, now) as { slot: number } | undefined
      if (!free) {
        // Slot rows are made on first use (and when the limit grows), inside the same transaction.
        for (let slot = 0; slot < limit; slot++) st.seedSlot.run(projectId, flow, slot)
        free = st.freeSlot.get(projectId, flow, limit, now) as { slot: number } | undefined
        if (!free) return null
      }
      const token = randomUUID()
      st.takeFreeSlot.run(token, now + leaseMs, projectId, flow, free.slot)
      return token
    })
    this.takeSlot = (...args) => take.immediate(...args)
  }

  async claimIdempotencyKey(request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    const now = Date.now()
    if (now - this.lastKeyPrune >= GUARD_PRUNE_INTERVAL_MS) {
      this.lastKeyPrune = now
      guarded(() => this.statements.pruneKeys.run(now, now))
    }
    return guarded(() => this.claimKey(request, now))
  }

  async completeIdempotencyKey(ref: IdempotencyKeyRef, token: string, response: StoredResponse): Promise<void> {
    const { projectId, flow, caller, key } = ref
    guarded(() => this.statements.completeKey.run(response.status, JSON.stringify(response.headers), response.body, projectId, flow, caller, key, token))
  }

  async releaseIdempotencyKey(ref: IdempotencyKeyRef, token: string): Promise<void> {
    guarded(() => this.statements.releaseKey.run(ref.projectId, ref.flow, ref.caller, ref.key, token))
  }

  async acquireFlowSlot(projectId: string, flow: string, limit: number, leaseMs: number): Promise<string | null> {
    if (limit < 1) return null
    return guarded(() => this.takeSlot(projectId, flow, limit, leaseMs, Date.now()))
  }

  async releaseFlowSlot(projectId: string, flow: string, token: string): Promise<void> {
    guarded(() => this.statements.releaseSlot.run(projectId, flow, token))
  }

  async heldFlowSlots(projectId: string, flow: string): Promise<number> {
    return guarded(() => (this.statements.heldSlots.get(projectId, flow, Date.now()) as { n: number }).n)
  }

  async addRateHits(projectId: string, ip: string, windowStart: number, hits: number): Promise<number> {
    return guarded(() => {
      if (windowStart - this.lastHitPrune >= GUARD_PRUNE_INTERVAL_MS) {
        this.lastHitPrune = windowStart
        // The previous window stays: a process whose clock lags a little may still be counting it.
        this.statements.pruneHits.run(windowStart - GUARD_PRUNE_INTERVAL_MS)
      }
      return (this.statements.addHits.get(projectId, ip, windowStart, hits) as { hits: number }).hits
    })
  }

  async claimSignature(projectId: string, flow: string, signature: string, expiresAt: number): Promise<boolean> {
    const now = Date.now()
    return guarded(() => {
      if (now - this.lastSignaturePrune >= GUARD_PRUNE_INTERVAL_MS) {
        this.lastSignaturePrune = now
        this.statements.pruneSignatures.run(now)
      }
      return this.statements.claimSignature.get(projectId, flow, signature, expiresAt, now) !== undefined
    })
  }
}

function storedResponse(row: KeyRow): StoredResponse {
  return { status: row.status ?? 200, headers: row.headers ? (JSON.parse(row.headers) as Record<string, string>) : {}, body: row.body ?? '' }
}
