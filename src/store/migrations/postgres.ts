// PostgreSQL schema, as an ordered list of migrations, and the runner that applies them under an
// advisory lock so several `serve` instances starting at once apply each migration exactly once.
import type { PoolClient } from 'pg'
import { unappliedMigrations, type Migration } from './runner.js'

export const POSTGRES_MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE runs (
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        "trigger" TEXT NOT NULL,
        method TEXT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        duration_ms DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL,
        http_status INTEGER,
        ports JSONB NOT NULL,
        failed_node_id TEXT,
        error TEXT
      );
      CREATE INDEX runs_by_project_time ON runs (project_id, started_at DESC, seq DESC);
      CREATE INDEX runs_by_project_flow_time ON runs (project_id, flow, started_at DESC, seq DESC);

      CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        collection TEXT NOT NULL,
        body JSONB NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
      );

      CREATE TABLE schedule_claims (
        project_id TEXT NOT NULL,
        schedule_id TEXT NOT NULL,
        minute TIMESTAMPTZ NOT NULL,
        claimed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, schedule_id, minute)
      );

      CREATE TABLE heartbeats (
        project_id TEXT PRIMARY KEY,
        at TIMESTAMPTZ NOT NULL,
        summary JSONB NOT NULL
      );

      CREATE TABLE cursors (
        project_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (project_id, key)
      );

      CREATE TABLE outbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id TEXT NOT NULL,
        channel TEXT NOT NULL,
        payload JSONB NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        lease_until TIMESTAMPTZ,
        delivered_at TIMESTAMPTZ,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
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
  { version: 3, sql: 'ALTER TABLE runs ADD COLUMN scheduled_for TIMESTAMPTZ' },
  // Versions 2 and 3 belong to other changes (documents, schedules); 4 is this one.
  {
    version: 4,
    sql: `
      ALTER TABLE runs ADD COLUMN replay_of TEXT;
      -- JSON as text: written once by the engine and read back whole, never queried inside.
      ALTER TABLE runs ADD COLUMN input TEXT;
      ALTER TABLE runs ADD COLUMN trace TEXT;
    `,
  },
  {
    // Version 5: the durable queue of async runs (SPEC §12, src/model/async-runs.ts). `input` is
    // cleared and `response` written when the run finishes, in the statement of its history record.
    version: 5,
    sql: `
      CREATE TABLE async_runs (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        method TEXT NOT NULL,
        input TEXT,
        received_at TIMESTAMPTZ NOT NULL,
        status TEXT NOT NULL DEFAULT 'queued',
        attempts INTEGER NOT NULL DEFAULT 0,
        claim_token TEXT,
        lease_until TIMESTAMPTZ,
        response JSONB,
        finished_at TIMESTAMPTZ
      );
      CREATE INDEX async_runs_waiting ON async_runs (project_id, received_at) WHERE status IN ('queued', 'running');
      CREATE INDEX async_runs_by_token ON async_runs (claim_token) WHERE claim_token IS NOT NULL;
      CREATE INDEX async_runs_finished ON async_runs (project_id, finished_at) WHERE finished_at IS NOT NULL;
    `,
  },
  // Version 6: the guards of SPEC §12. Times are the server's clock (now()), so instances with
  // skewed clocks agree on leases and expiry. Rate counts are UNLOGGED: a lost minute of counts
  // after a server crash is harmless, and they skip the WAL on every upsert.
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
        lease_until TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL,
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
        lease_until TIMESTAMPTZ,
        PRIMARY KEY (project_id, flow, slot)
      );
      CREATE UNLOGGED TABLE rate_counts (
        project_id TEXT NOT NULL,
        ip TEXT NOT NULL,
        window_start BIGINT NOT NULL,
        hits BIGINT NOT NULL,
        PRIMARY KEY (project_id, ip, window_start)
      );
    `,
  },
  // Version 7: fair claims across flows (SPEC §18, postgres/queue.ts). A claim walks the flows
  // with waiting runs and reads each flow's oldest queued runs and its running ones; this index
  // answers each as one range. It replaces version 5's (project_id, received_at) index, which only
  // the oldest-first claim used.
  {
    version: 7,
    sql: `
      CREATE INDEX async_runs_by_flow ON async_runs (project_id, flow, status, received_at) WHERE status IN ('queued', 'running');
      DROP INDEX async_runs_waiting;
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
        lease_until TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL,
        status INTEGER,
        headers TEXT,
        body TEXT,
        PRIMARY KEY (project_id, flow, caller, idem_key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  },
  // Version 9: timestamped webhook signatures already accepted (SPEC §19, postgres/guards.ts), shared
  // by every instance. `expires_at` is epoch ms derived from the sender's timestamp, not a clock here.
  {
    version: 9,
    sql: `
      CREATE TABLE used_signatures (
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        signature TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (project_id, flow, signature)
      );
      CREATE INDEX used_signatures_expiry ON used_signatures (expires_at);
    `,
  },
  // Version 10: a retry from the failed step (SPEC §22) records the node it executed from.
  { version: 10, sql: 'ALTER TABLE runs ADD COLUMN resumed_from TEXT' },
  // Version 11: parked runs (SPEC §22, src/model/waits.ts) and each project's resume key. Due times
  // and leases are the server's clock; `state` is cleared when the run finishes.
  {
    version: 11,
    sql: `
      CREATE TABLE parked_runs (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        flow TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        due_at TIMESTAMPTZ NOT NULL,
        seq INTEGER NOT NULL,
        state TEXT NOT NULL,
        payload TEXT,
        port TEXT,
        claim_token TEXT,
        lease_until TIMESTAMPTZ,
        finished_at TIMESTAMPTZ
      );
      CREATE INDEX parked_runs_due ON parked_runs (project_id, status, due_at);
      CREATE TABLE resume_keys (
        project_id TEXT PRIMARY KEY,
        key TEXT NOT NULL
      );
    `,
  },
]

/** One lock key for flowctl's migrations in this database (any number that is ours). */
const MIGRATION_LOCK_KEY = 4_242_001

/** The tables of migration 1: what a flowctl before `database.schema` created in `public`. */
const PUBLIC_TABLES_OF_VERSION_1 = ['schema_migrations', 'runs', 'documents', 'schedule_claims', 'heartbeats', 'cursors', 'outbox']
/**
 * Tables later migrations create: moved with the others when present, so a `public` layout made by a
 * newer flowctl opened without a schema (its schema_migrations records them) keeps them too.
 */
const PUBLIC_TABLES_OF_LATER_VERSIONS = ['async_runs', 'idempotency_keys', 'flow_slots', 'rate_counts', 'used_signatures', 'parked_runs', 'resume_keys']

/**
 * Creates the schema (when given) and applies pending migrations, holding a session advisory lock.
 * The connection's search_path is the schema, so the migrations' SQL names no schema.
 * With `adoptPublicTables`: a database where an earlier flowctl kept its tables in `public` (its
 * `schema_migrations` is there, none in the schema yet) has those tables moved into the schema, in
 * one transaction, so history carries over.
 */
export async function migratePostgres(client: PoolClient, schema: string | undefined, options: { adoptPublicTables?: boolean } = {}): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY])
  try {
    if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
    if (schema && schema !== 'public' && options.adoptPublicTables) await adoptPublicTables(client, schema)
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())')
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations')
    for (const migration of unappliedMigrations(
      POSTGRES_MIGRATIONS,
      rows.map((row) => row.version),
    )) {
      await client.query('BEGIN')
      try {
        await client.query(migration.sql)
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version])
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK')
        throw error
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY])
  }
}

async function adoptPublicTables(client: PoolClient, schema: string): Promise<void> {
  const { rows } = await client.query<{ schema: string; table: string }>(
    `SELECT table_schema AS schema, table_name AS table FROM information_schema.tables
      WHERE table_schema IN ('public', $1) AND table_name = ANY($2)`,
    [schema, [...PUBLIC_TABLES_OF_VERSION_1, ...PUBLIC_TABLES_OF_LATER_VERSIONS]],
  )
  const inPublic = new Set(rows.filter((row) => row.schema === 'public').map((row) => row.table))
  const inSchema = new Set(rows.filter((row) => row.schema === schema).map((row) => row.table))
  // Only flowctl's own layout: its migrations table and its runs table, and nothing of ours in the schema yet.
  if (!inPublic.has('schema_migrations') || !inPublic.has('runs') || inSchema.size > 0) return
  const { rows: columns } = await client.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'runs'`,
  )
  const names = new Set(columns.map((column) => column.column_name))
  if (!['project_id', 'flow', 'trigger', 'ports', 'failed_node_id'].every((name) => names.has(name))) return
  await client.query('BEGIN')
  try {
    for (const table of [...PUBLIC_TABLES_OF_VERSION_1, ...PUBLIC_TABLES_OF_LATER_VERSIONS]) {
      if (inPublic.has(table)) await client.query(`ALTER TABLE public."${table}" SET SCHEMA "${schema}"`)
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  }
}
