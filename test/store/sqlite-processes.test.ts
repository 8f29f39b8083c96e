// Several real processes sharing one SQLite file, as `serve`, a crontab `tick` and `history` do:
// they open a new file at once (migrations), race for the same claims and cursors, and lease one
// outbox. The store is compiled with tsc into node_modules/.cache so child processes can import it.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '..', '..')
const BUILD = join(ROOT, 'node_modules', '.cache', `flowctl-store-test-${process.pid}`)
const PROCESSES = 4

const WORKER = `
import { openSqliteStore } from './store/sqlite/index.js'
const [file, startAt] = process.argv.slice(2)
while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 2))
const store = await openSqliteStore(file)
const claims = []
for (let m = 0; m < 40; m++) claims.push(await store.schedules.claimMinute('p', 'nightly', new Date(Date.UTC(2024, 0, 1, 0, m)).toISOString()))
const cursors = []
for (let i = 0; i < 20; i++) {
  const expected = await store.schedules.getCursor('p', 'alert:0')
  const next = String(Number(expected ?? 0) + 1).padStart(4, '0')
  cursors.push((await store.schedules.advanceCursor('p', 'alert:0', expected, next, { channel: 'ops', payload: { next } })) ? next : null)
}
const leased = (await store.schedules.leaseOutbox('p', 60000, new Date())).map((m) => m.id)
await store.history.recordRun({ id: 'run-' + process.pid, projectId: 'p', flow: 'f', trigger: 'cron', method: 'CRON', startedAt: new Date().toISOString(),
  durationMs: 1, status: 'success', httpStatus: null, ports: [], failedNodeId: null, error: null, scheduledFor: null }, 100)
await store.close()
console.log(JSON.stringify({ claims, cursors, leased }))
`

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-sqlite-procs-'))
  await run('node', [
    join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
    join(ROOT, 'src', 'store', 'sqlite', 'index.ts'),
    '--outDir',
    BUILD,
    '--rootDir',
    join(ROOT, 'src'),
    '--module',
    'NodeNext',
    '--moduleResolution',
    'NodeNext',
    '--target',
    'ES2022',
    '--esModuleInterop',
    '--skipLibCheck',
    '--types',
    'node',
  ])
  await writeFile(join(BUILD, 'package.json'), '{ "type": "module" }')
  await writeFile(join(BUILD, 'worker.js'), WORKER)
}, 120_000)

afterAll(async () => {
  await rm(BUILD, { recursive: true, force: true })
  await rm(dir, { recursive: true, force: true })
})

describe('sqlite store shared by several processes', () => {
  it('opens one new file from several processes at once and grants each claim, cursor move and lease once', async () => {
    const file = join(dir, 'shared', 'flowctl.db')
    await mkdir(join(dir, 'shared'), { recursive: true })
    const startAt = String(Date.now() + 700)
    const outputs = await Promise.all(Array.from({ length: PROCESSES }, () => run('node', [join(BUILD, 'worker.js'), file, startAt], { cwd: BUILD })))
    const results = outputs.map((o) => JSON.parse(o.stdout) as { claims: boolean[]; cursors: (string | null)[]; leased: string[] })

    for (let m = 0; m < 40; m++) expect(results.filter((r) => r.claims[m]).length).toBe(1)

    // Every cursor value was reached by exactly one process: no two processes both moved from one value.
    const moves = results.flatMap((r) => r.cursors.filter((c): c is string => c !== null)).sort()
    expect(new Set(moves).size).toBe(moves.length)
    expect(moves.at(-1)).toBe(String(moves.length).padStart(4, '0'))

    const leased = results.flatMap((r) => r.leased)
    expect(new Set(leased).size).toBe(leased.length)

    const { openSqliteStore } = await import('../../src/store/sqlite/index.js')
    const store = await openSqliteStore(file)
    expect(await store.schedules.getCursor('p', 'alert:0')).toBe(moves.at(-1))
    expect((await store.history.listRuns({ projectId: 'p' })).length).toBe(PROCESSES)
    // Every message enqueued by a winning move is in the outbox exactly once; unleased ones remain.
    const rest = await store.schedules.leaseOutbox('p', 60_000, new Date())
    expect(leased.length + rest.length).toBe(moves.length)
    await store.close()
  }, 60_000)
})
