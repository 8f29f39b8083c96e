// 8. Documents (SPEC §10): a `find` node by an indexed equality over 100,000 documents against a `get`
// node by id (the baseline: one primary-key lookup), measured in the same run on the same store.
// Target: find within 3× of get, i.e. a ratio find/get of at least 0.33× in operations per second.
// Both nodes run through their real execute() with the real resolver (the value arrives through
// {{ start.x }}), so binding the filter and compiling it to SQL are part of the figure.
// The find is "a ticket by its code": one match per key, the default page (limit 100, no skip), so it
// reads the index to the end of the match and its count comes from the page. The database is
// ANALYZEd after seeding, as a user's long-lived database may be: SQLite then has STAT4 statistics,
// under which a statement whose bound values could change its plan is re-planned on every run.
// SQLite always; PostgreSQL when FLOWCTL_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
// answers, in a fresh schema dropped afterwards. Run `npm run build` first.
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createResolver, createScope } from '../dist/language/resolve.js'
import { findNode } from '../dist/nodes/find.js'
import { getNode } from '../dist/nodes/get.js'
import { getNodeKind, parseNodeSettings } from '../dist/nodes/registry.js'
import { canonicalJson } from '../dist/internal/canonical-json.js'
import { newDocumentId } from '../dist/internal/ids.js'
import { openPostgresStore } from '../dist/store/postgres/index.js'
import { openSqliteStore } from '../dist/store/sqlite/index.js'
import { withBenchSchema } from './lib/pg-schema.js'
import { fmtRatio, row, runIfMain } from './lib/results.js'

const DOCUMENTS = 100_000
const LOOKUPS = 4_000
const TARGET = 1 / 3
const PROJECT = 'bench'

let log = console.log
let rows = []

function seedDocuments() {
  return Array.from({ length: DOCUMENTS }, (_, i) => ({
    id: newDocumentId(),
    body: JSON.stringify(canonicalJson({ code: `T-${i}`, status: i % 3 ? 'open' : 'closed', qty: i % 97, title: `ticket number ${i}` })),
  }))
}

/** A node context as the engine builds one: the node's settings, the project id, the store and the real resolver. */
function contextFor(store, node, scope) {
  const flow = {}
  // As the loader does: the kind's settings parsed once into `parsed`; a node sees the documents port.
  node.parsed = parseNodeSettings(getNodeKind(node.type), node.settings)
  return {
    node,
    project: { settings: { projectId: PROJECT } },
    documents: store.documents,
    resolve: createResolver(flow, scope, new Map()),
    signal: new AbortController().signal,
    run: { id: 'bench', startedAt: new Date().toISOString(), trigger: 'cli' },
  }
}

const ROUNDS = 8

/**
 * Operations per second of each of `a` and `b`, called LOOKUPS times each, awaited one by one (one
 * request at a time). The calls alternate in rounds (a then b, then b then a, ...), so a change in the
 * machine's load during the run weighs on both alike.
 */
async function rates(a, b) {
  for (let i = 0; i < 200; i += 1) {
    await a(i)
    await b(i)
  } // warm-up: statements prepared, pages cached
  const spent = [0, 0]
  const perRound = LOOKUPS / ROUNDS
  for (let round = 0; round < ROUNDS; round += 1) {
    const order =
      round % 2
        ? [
            [b, 1],
            [a, 0],
          ]
        : [
            [a, 0],
            [b, 1],
          ]
    for (const [once, slot] of order) {
      const started = performance.now()
      for (let i = round * perRound; i < (round + 1) * perRound; i += 1) await once(i)
      spent[slot] += performance.now() - started
    }
  }
  return spent.map((ms) => LOOKUPS / (ms / 1000))
}

async function measure(label, store, seeded) {
  const scope = createScope({ id: 'bench', startedAt: '', trigger: 'cli' })
  const start = { id: '', code: '' }
  scope.start = start
  const pick = (i) => seeded[(i * 7919) % seeded.length]
  const getContext = contextFor(store, { id: 'g', type: 'get', settings: { collection: 'tickets', documentId: '{{start.id}}' } }, scope)
  const findContext = contextFor(store, { id: 'f', type: 'find', settings: { collection: 'tickets', filter: { code: '{{start.code}}' } } }, scope)
  const seen = await findNode.execute(((start.code = 'T-42'), findContext))
  if (seen.output.count !== 1) throw new Error(`find by code found ${seen.output.count} documents, expected 1`)

  const [get, find] = await rates(
    async (i) => {
      start.id = pick(i).id
      const result = await getNode.execute(getContext)
      if (result.port !== 'found') throw new Error('get missed a document')
    },
    async (i) => {
      start.code = `T-${(i * 7919) % DOCUMENTS}`
      const result = await findNode.execute(findContext)
      if (result.output.count !== 1) throw new Error('find missed a document')
    },
  )
  const ratio = find / get
  log(
    `  ${label.padEnd(10)} find by indexed code ${find.toFixed(0).padStart(6)} ops/s   get by id ${get.toFixed(0).padStart(6)} ops/s   ratio ${ratio.toFixed(2)}× (target ≥ ${TARGET.toFixed(2)}×)`,
  )
  rows.push(
    row(
      `find node, indexed equality over ${DOCUMENTS.toLocaleString('en')} documents, ${label} (ops/s; baseline: get node by id)`,
      find.toFixed(0),
      get.toFixed(0),
      fmtRatio(ratio),
      '≥ 0.33× (within 3×)',
      ratio >= TARGET,
    ),
  )
}

async function sqlite(seeded) {
  const dir = mkdtempSync(join(tmpdir(), 'flowctl-documents-bench-'))
  try {
    const file = join(dir, 'flowctl.db')
    await (await openSqliteStore(file)).close() // creates the schema
    const db = new Database(file)
    const insert = db.prepare('INSERT INTO documents (id, project_id, collection, body, created_at) VALUES (?, ?, ?, ?, ?)')
    const now = new Date().toISOString()
    db.transaction(() => {
      for (const d of seeded) insert.run(d.id, PROJECT, 'tickets', d.body, now)
    })()
    db.exec('ANALYZE')
    db.close()
    const store = await openSqliteStore(file)
    await store.documents.ensureIndexes({ tickets: [['code']] })
    await measure('SQLite', store, seeded)
    await store.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function postgres(url, seeded) {
  return withBenchSchema(url, log, async (schema, pg) => {
    const store = await openPostgresStore(url, { schema })
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
    await client.connect()
    for (let i = 0; i < seeded.length; i += 10_000) {
      const part = seeded.slice(i, i + 10_000)
      await client.query(
        `INSERT INTO documents (id, project_id, collection, body)
        SELECT id, $1, 'tickets', body::jsonb FROM unnest($2::text[], $3::text[]) AS d(id, body)`,
        [PROJECT, part.map((d) => d.id), part.map((d) => d.body)],
      )
    }
    await store.documents.ensureIndexes({ tickets: [['code']] })
    await client.query('ANALYZE documents')
    await client.end()
    await measure('PostgreSQL', store, seeded)
    await store.close()
  })
}

export async function run(options = {}) {
  log = options.log ?? console.log
  rows = []
  log(`[documents] find by an indexed field against get by id, ${DOCUMENTS.toLocaleString('en')} documents, ${LOOKUPS} lookups each`)
  const seeded = seedDocuments()
  await sqlite(seeded)
  const reached = await postgres(process.env.FLOWCTL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', seeded)
  const notes = reached === false ? ['PostgreSQL not reachable: its row is missing'] : []
  return { name: 'documents', rows, notes }
}

await runIfMain(import.meta.url, 'documents', run)
