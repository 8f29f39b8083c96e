// SPEC §12's guards on PostgreSQL, for several `serve` instances on one database. Each claim is one
// statement: an idempotency key is an INSERT ... ON CONFLICT DO UPDATE ... WHERE (taken only when
// absent, expired or abandoned), a flow slot an UPDATE of the first free slot row picked with
// FOR UPDATE SKIP LOCKED, a rate count an upsert. No connection is held while a flow runs: slots are
// leases, so the pool is never exhausted by waiting runs and a dead instance's slot frees itself.
// Times are the server's clock (now()), so instances with skewed clocks agree.
import type { QueryResultRow } from 'pg'
import { randomUUID } from 'node:crypto'
import {
  GUARD_PRUNE_INTERVAL_MS,
  type GuardStore,
  type IdempotencyClaim,
  type IdempotencyClaimRequest,
  type IdempotencyKeyRef,
  type StoredResponse,
} from '../../model/guard-types.js'

export type PgQuery = <Row extends QueryResultRow>(name: string, text: string, values: unknown[]) => Promise<{ rows: Row[]; rowCount: number }>

const SQL = {
  claimKey: `
    INSERT INTO idempotency_keys AS k (project_id, flow, caller, idem_key, fingerprint, token, state, lease_until, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, 'running', now() + $7 * interval '1 millisecond', now() + $8 * interval '1 millisecond')
    ON CONFLICT (project_id, flow, caller, idem_key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, token = EXCLUDED.token, state = 'running', lease_until = EXCLUDED.lease_until,
          expires_at = EXCLUDED.expires_at, status = NULL, headers = NULL, body = NULL
      WHERE k.expires_at <= now() OR (k.state = 'running' AND k.lease_until <= now())
    RETURNING token`,
  getKey: `SELECT fingerprint, state, status, headers, body FROM idempotency_keys
            WHERE project_id = $1 AND flow = $2 AND caller = $3 AND idem_key = $4
              AND expires_at > now() AND (state = 'done' OR lease_until > now())`,
  completeKey: `UPDATE idempotency_keys SET state = 'done', status = $6, headers = $7, body = $8
                 WHERE project_id = $1 AND flow = $2 AND caller = $3 AND idem_key = $4 AND token = $5`,
  releaseKey: 'DELETE FROM idempotency_keys WHERE project_id = $1 AND flow = $2 AND caller = $3 AND idem_key = $4 AND token = $5',
  pruneKeys: `DELETE FROM idempotency_keys WHERE expires_at <= now() AND (state = 'done' OR lease_until <= now())`,
  seedSlots: `INSERT INTO flow_slots (project_id, flow, slot) SELECT $1, $2, s FROM generate_series(0, $3 - 1) AS s
              ON CONFLICT DO NOTHING`,
  // A slot row locked by another instance's claim right now is skipped, not waited for.
  takeSlot: `
    UPDATE flow_slots SET holder = $4, lease_until = now() + $5 * interval '1 millisecond'
     WHERE (project_id, flow, slot) = (
       SELECT project_id, flow, slot FROM flow_slots
        WHERE project_id = $1 AND flow = $2 AND slot < $3 AND (holder IS NULL OR lease_until <= now())
        ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING slot`,
  releaseSlot: 'UPDATE flow_slots SET holder = NULL, lease_until = NULL WHERE project_id = $1 AND flow = $2 AND holder = $3',
  heldSlots: 'SELECT count(*)::int AS n FROM flow_slots WHERE project_id = $1 AND flow = $2 AND holder IS NOT NULL AND lease_until > now()',
  addHits: `INSERT INTO rate_counts AS r (project_id, ip, window_start, hits) VALUES ($1, $2, $3, $4)
            ON CONFLICT (project_id, ip, window_start) DO UPDATE SET hits = r.hits + EXCLUDED.hits RETURNING hits`,
  pruneHits: 'DELETE FROM rate_counts WHERE window_start < $1',
  // Taken when absent, or when the record left by an earlier use has expired: one row, one winner.
  claimSignature: `INSERT INTO used_signatures AS u (project_id, flow, signature, expires_at) VALUES ($1, $2, $3, $4)
                   ON CONFLICT (project_id, flow, signature) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE u.expires_at <= $5
                   RETURNING 1 AS taken`,
  pruneSignatures: 'DELETE FROM used_signatures WHERE expires_at < $1',
}

interface KeyRow {
  fingerprint: string
  state: string
  status: number | null
  headers: string | null
  body: string | null
}

export class PostgresGuards implements GuardStore {
  /** Flows (and limits) whose slot rows this process knows exist. */
  private readonly seeded = new Set<string>()
  private lastKeyPrune = 0
  private lastHitPrune = 0
  private lastSignaturePrune = 0

  constructor(private readonly query: PgQuery) {}

  async claimIdempotencyKey(request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    const { projectId, flow, caller, key } = request
    const now = Date.now()
    if (now - this.lastKeyPrune >= GUARD_PRUNE_INTERVAL_MS) {
      this.lastKeyPrune = now
      await this.query('flowctl_prune_keys', SQL.pruneKeys, [])
    }
    // The row can expire between the claim and the read: then the claim is tried again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const token = randomUUID()
      const claimed = await this.query<{ token: string }>('flowctl_claim_key', SQL.claimKey, [
        projectId,
        flow,
        caller,
        key,
        request.fingerprint,
        token,
        request.leaseMs,
        request.ttlMs,
      ])
      if (claimed.rows[0]?.token === token) return { kind: 'claimed', token }
      const { rows } = await this.query<KeyRow>('flowctl_get_key', SQL.getKey, [projectId, flow, caller, key])
      const row = rows[0]
      if (!row) continue
      if (row.fingerprint !== request.fingerprint) return { kind: 'mismatch' }
      if (row.state !== 'done') return { kind: 'in-flight' }
      return {
        kind: 'replay',
        response: { status: row.status ?? 200, headers: row.headers ? (JSON.parse(row.headers) as Record<string, string>) : {}, body: row.body ?? '' },
      }
    }
    return { kind: 'in-flight' }
  }

  async completeIdempotencyKey(ref: IdempotencyKeyRef, token: string, response: StoredResponse): Promise<void> {
    const { projectId, flow, caller, key } = ref
    await this.query('flowctl_complete_key', SQL.completeKey, [
      projectId,
      flow,
      caller,
      key,
      token,
      response.status,
      JSON.stringify(response.headers),
      response.body,
    ])
  }

  async releaseIdempotencyKey(ref: IdempotencyKeyRef, token: string): Promise<void> {
    await this.query('flowctl_release_key', SQL.releaseKey, [ref.projectId, ref.flow, ref.caller, ref.key, token])
  }

  async acquireFlowSlot(projectId: string, flow: string, limit: number, leaseMs: number): Promise<string | null> {
    if (limit < 1) return null
    const seedKey = `${projectId}\u0000${flow}\u0000${limit}`
    if (!this.seeded.has(seedKey)) {
      await this.query('flowctl_seed_slots', SQL.seedSlots, [projectId, flow, limit])
      this.seeded.add(seedKey)
    }
    const token = randomUUID()
    const { rows } = await this.query<{ slot: number }>('flowctl_take_slot', SQL.takeSlot, [projectId, flow, limit, token, leaseMs])
    return rows.length === 1 ? token : null
  }

  async releaseFlowSlot(projectId: string, flow: string, token: string): Promise<void> {
    await this.query('flowctl_release_slot', SQL.releaseSlot, [projectId, flow, token])
  }

  async heldFlowSlots(projectId: string, flow: string): Promise<number> {
    const { rows } = await this.query<{ n: number }>('flowctl_held_slots', SQL.heldSlots, [projectId, flow])
    return rows[0]?.n ?? 0
  }

  async addRateHits(projectId: string, ip: string, windowStart: number, hits: number): Promise<number> {
    if (windowStart - this.lastHitPrune >= GUARD_PRUNE_INTERVAL_MS) {
      this.lastHitPrune = windowStart
      // The previous window stays: an instance whose clock lags a little may still be counting it.
      await this.query('flowctl_prune_hits', SQL.pruneHits, [windowStart - GUARD_PRUNE_INTERVAL_MS])
    }
    const { rows } = await this.query<{ hits: string }>('flowctl_add_hits', SQL.addHits, [projectId, ip, windowStart, hits])
    return Number(rows[0]?.hits ?? hits)
  }

  async claimSignature(projectId: string, flow: string, signature: string, expiresAt: number): Promise<boolean> {
    const now = Date.now()
    if (now - this.lastSignaturePrune >= GUARD_PRUNE_INTERVAL_MS) {
      this.lastSignaturePrune = now
      // A margin of one interval: an instance whose clock lags may still accept those timestamps.
      await this.query('flowctl_prune_signatures', SQL.pruneSignatures, [now - GUARD_PRUNE_INTERVAL_MS])
    }
    const { rowCount } = await this.query('flowctl_claim_signature', SQL.claimSignature, [projectId, flow, signature, expiresAt, now])
    return rowCount === 1
  }
}
