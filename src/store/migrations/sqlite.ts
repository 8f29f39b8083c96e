// SQLite schema, as an ordered list of migrations. Never edit a released migration: add a new one.
// Times are canonical ISO text (text order = time order), except lease_until, which is epoch ms.

import type { Migration } from './runner.js'

export const SQLITE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        "trigger" TEXT NOT NULL,
        method TEXT NOT NULL,
        started_at TEXT NOT NULL,
        duration_ms REAL NOT NULL,
        status TEXT NOT NULL,
        http_status INTEGER,
        ports TEXT NOT NULL,
        failed_node_id TEXT,
        error TEXT
      );
      -- Ascending on purpose: scanned backwards it gives started_at DESC, rowid DESC (newest first,
      -- ties by insertion order) without a sort step, which a DESC index cannot.
      CREATE INDEX runs_by_project_time ON runs (project_id, started_at);
      CREATE INDEX runs_by_project_flow_time ON runs (project_id, flow, started_at);

      CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        collection TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL
      );

      CREATE TABLE schedule_claims (
        project_id TEXT NOT NULL,
        schedule_id TEXT NOT NULL,
        minute TEXT NOT NULL,
        claimed_at TEXT NOT NULL,
        PRIMARY KEY (project_id, schedule_id, minute)
      );

      CREATE TABLE heartbeats (
        project_id TEXT PRIMARY KEY,
        at TEXT NOT NULL,
        summary TEXT NOT NULL
      );

      CREATE TABLE cursors (
        project_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (project_id, key)
      );

      CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id TEXT NOT NULL,
        channel TEXT NOT NULL,
        payload TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        lease_until INTEGER,
        delivered_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX outbox_pending ON outbox (project_id, id) WHERE delivered_at IS NULL;
    `,
  },
  {
    // Documents by collection (SPEC §10): listing, counting and scanning one collection, in id order.
    version: 2,
    sql: 'CREATE INDEX documents_by_collection ON documents (project_id, collection, id);',
  },
  // Version 3: the minute a scheduled run is for (SPEC §16).
  { version: 3, sql: 'ALTER TABLE runs ADD COLUMN scheduled_for TEXT' },
  // Every version a database has not recorded is applied (not only those above its newest).
  {
    version: 4,
    sql: `
      ALTER TABLE runs ADD COLUMN replay_of TEXT;
      -- JSON text, written once by the engine; listRuns never reads them.
      ALTER TABLE runs ADD COLUMN input TEXT;
      ALTER TABLE runs ADD COLUMN trace TEXT;
    `,
  },
  {
    // Version 5: the durable queue of async runs (SPEC §12, src/model/async-runs.ts). `input` is
    // cleared and `response` written when the run finishes, in the transaction of its history record.
    version: 5,
    sql: `
      CREATE TABLE async_runs (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        method TEXT NOT NULL,
        input TEXT,
        received_at TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'queued',
        attempts INTEGER NOT NULL DEFAULT 0,
        claim_token TEXT,
        lease_until INTEGER,
        response TEXT,
        finished_at TEXT
      );
      CREATE INDEX async_runs_by_status ON async_runs (project_id, status, received_at);
      CREATE INDEX async_runs_by_token ON async_runs (claim_token) WHERE claim_token IS NOT NULL;
      CREATE INDEX async_runs_finished ON async_runs (project_id, finished_at) WHERE finished_at IS NOT NULL;
    `,
  },
  // Version 6: the guards of SPEC §12 (idempotency keys, flow concurrency slots, cluster rate counts).
  // Times are epoch ms, compared with the caller's clock (processes on one machine share it).
  {
    version: 6,
    sql: `
      CREATE TABLE idempotency_keys (
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        idem_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        token TEXT NOT NULL,
        state TEXT NOT NULL,
        lease_until INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status INTEGER,
        headers TEXT,
        body TEXT,
        PRIMARY KEY (project_id, flow, idem_key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
      CREATE TABLE flow_slots (
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        slot INTEGER NOT NULL,
        holder TEXT,
        lease_until INTEGER,
        PRIMARY KEY (project_id, flow, slot)
      );
      CREATE TABLE rate_counts (
        project_id TEXT NOT NULL,
        ip TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        hits INTEGER NOT NULL,
        PRIMARY KEY (project_id, ip, window_start)
      );
    `,
  },
  // Version 7: fair claims across flows (SPEC §18, sqlite/queue.ts). A claim reads each flow's
  // oldest queued runs and the running ones per flow; this index answers each as one range. It
  // replaces the index of version 5, whose (project_id, status) prefix it keeps.
  {
    version: 7,
    sql: `
      CREATE INDEX async_runs_by_flow ON async_runs (project_id, status, flow, received_at);
      DROP INDEX async_runs_by_status;
    `,
  },
  // Version 8: idempotency answers per flow, key and caller (SPEC §19). Stored keys had no caller, so
  // none can be matched to one safely (replaying them to anyone was the flaw): they are dropped, and
  // a retry of a request answered before the upgrade runs again.
  {
    version: 8,
    sql: `
      DROP TABLE idempotency_keys;
      CREATE TABLE idempotency_keys (
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        caller TEXT NOT NULL,
        idem_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        token TEXT NOT NULL,
        state TEXT NOT NULL,
        lease_until INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status INTEGER,
        headers TEXT,
        body TEXT,
        PRIMARY KEY (project_id, flow, caller, idem_key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  },
  // Version 9: timestamped webhook signatures already accepted (SPEC §19, sqlite/guards.ts), each
  // kept until its timestamp is past the tolerance. `expires_at` is epoch ms.
  {
    version: 9,
    sql: `
      CREATE TABLE used_signatures (
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        signature TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (project_id, flow, signature)
      );
      CREATE INDEX used_signatures_expiry ON used_signatures (expires_at);
    `,
  },
  // Version 10: a retry from the failed step (SPEC §22) records the node it executed from.
  { version: 10, sql: 'ALTER TABLE runs ADD COLUMN resumed_from TEXT' },
  // Version 11: parked runs (SPEC §22, src/model/waits.ts) and each project's resume key. Times are
  // epoch ms; `state` is cleared when the run finishes, the row kept for the resume route's 409/410.
  {
    version: 11,
    sql: `
      CREATE TABLE parked_runs (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        due_at INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        state TEXT NOT NULL,
        payload TEXT,
        port TEXT,
        claim_token TEXT,
        lease_until INTEGER,
        finished_at INTEGER
      );
      CREATE INDEX parked_runs_due ON parked_runs (project_id, status, due_at);
      CREATE TABLE resume_keys (
        project_id TEXT PRIMARY KEY,
        key TEXT NOT NULL
      );
    `,
  },
]
