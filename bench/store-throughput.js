// 7. recordRun throughput of the stores (run `npm run build` first): 10,000 calls one after another
// (each awaited, as one request at a time records its run) and 10,000 concurrent in batches of 100
// (as the Run API under load), each against a baseline measured in the same run: raw better-sqlite3
// / raw pg INSERTs of the same row, one autocommit each, the same way (sequential or concurrent).
// PostgreSQL is measured when FLOWCTL_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
// answers, in a fresh schema dropped afterwards.
import Database from 'better-sqlite3'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteStore } from '../dist/store/sqlite/index.js'
import { openPostgresStore } from '../dist/store/postgres/index.js'
import { withBenchSchema } from './lib/pg-schema.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'

const RUNS = 10_000
const BATCH = 100
const CAP = 10_000

let counter = 0
function makeRun(projectId) {
  counter += 1
  return {
    id: `run_${counter}_${randomBytes(4).toString('hex')}`,
    projectId,
    flow: 'create-order',
    trigger: 'http',
    method: 'POST',
    startedAt: new Date(Date.UTC(2024, 4, 1) + counter * 1000).toISOString(),
    durationMs: 12,
    status: 'success',
    httpStatus: 201,
    ports: [{ nodeId: 'check', port: 'true' }],
    failedNodeId: null,
    error: null,
  }
}

/** runs/s of `write` over RUNS fresh runs, awaited one by one or BATCH at a time. */
async function rate(write, concurrent) {
  const runs = Array.from({ length: RUNS }, () => makeRun('bench'))
  const started = performance.now()
  if (concurrent) {
    for (let i = 0; i < RUNS; i += BATCH) await Promise.all(runs.slice(i, i + BATCH).map(write))
  } else {
    for (const run of runs) await write(run)
  }
  return RUNS / ((performance.now() - started) / 1000)
}

let rows = []
let log = console.log
function report(label, mode, flowctl, raw) {
  log(
    `  ${label.padEnd(10)} ${mode.padEnd(26)} flowctl ${flowctl.toFixed(0).padStart(6)} runs/s   raw ${raw.toFixed(0).padStart(6)} runs/s   ratio ${(flowctl / raw).toFixed(2)}×`,
  )
  rows.push(
    row(
      `recordRun, ${label}, ${mode} (runs/s; baseline: raw driver INSERT, one autocommit each)`,
      flowctl.toFixed(0),
      raw.toFixed(0),
      fmtRatio(flowctl / raw),
      '—',
      null,
    ),
  )
}

const runParams = (r) => [
  r.id,
  r.projectId,
  r.flow,
  r.trigger,
  r.method,
  r.startedAt,
  r.durationMs,
  r.status,
  r.httpStatus,
  JSON.stringify(r.ports),
  r.failedNodeId,
  r.error,
]

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'flowctl-store-bench-'))
  try {
    for (const concurrent of [false, true]) {
      const mode = concurrent ? 'concurrent' : 'sequential'
      const file = join(dir, `${mode}.db`)
      const store = await openSqliteStore(file)
      const flowctl = await rate((run) => store.history.recordRun(run, CAP), concurrent)
      await store.close()
      // The same table, pragmas and row, straight through better-sqlite3.
      const db = new Database(file)
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = NORMAL')
      db.exec('DELETE FROM runs')
      const insert =
        db.prepare(`INSERT INTO runs (id, project_id, flow, "trigger", method, started_at, duration_ms, status, http_status, ports, failed_node_id, error)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      const raw = await rate(async (run) => {
        insert.run(...runParams(run))
      }, concurrent)
      db.close()
      report('SQLite', mode, flowctl, raw)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function postgres(url) {
  return withBenchSchema(url, log, async (schema, pg) => {
    for (const concurrent of [false, true]) {
      const mode = concurrent ? 'concurrent' : 'sequential'
      const store = await openPostgresStore(url, { schema })
      const flowctl = await rate((run) => store.history.recordRun(run, CAP), concurrent)
      await store.close()
      // A pool of the same size as the store's, one named INSERT per run.
      const pool = new pg.Pool({ connectionString: url, max: 10, options: `-c search_path=${schema}` })
      await pool.query('DELETE FROM runs')
      const text = `INSERT INTO runs (id, project_id, flow, "trigger", method, started_at, duration_ms, status, http_status, ports, failed_node_id, error)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12)`
      const raw = await rate((run) => pool.query({ name: 'bench_insert', text, values: runParams(run) }), concurrent)
      await pool.query('DELETE FROM runs')
      await pool.end()
      report('PostgreSQL', mode, flowctl, raw)
    }
  })
}

export async function run(options = {}) {
  log = options.log ?? console.log
  rows = []
  log('[store-throughput] recordRun against raw driver inserts')
  await sqlite()
  const reached = await postgres(process.env.FLOWCTL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
  const notes = reached === false ? ['PostgreSQL not reachable: its rows are missing'] : []
  return { name: 'store-throughput', rows, notes }
}

await runIfMain(import.meta.url, 'store-throughput', run)
