// Several real processes claiming async runs from one SQLite file (SPEC §12), as several `serve`
// processes on one machine do: each run goes to exactly one process, and each is recorded once.
// The children run the built store (dist/, made by `npm run build`), as serve would.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/index.js'

const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '..', '..')
const BUILT_STORE = join(ROOT, 'dist', 'store', 'sqlite', 'index.js')
const PROCESSES = 4
const RUNS = 120

const WORKER = `
import { openSqliteStore } from ${JSON.stringify(pathToFileURL(BUILT_STORE).href)}
import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
const [file, readyDir, processes, claimedDir] = process.argv.slice(2)
// Every process opens its store, then waits for the others: on a loaded machine one process may boot
// seconds after another, and claiming in-process is fast enough to take every run meanwhile.
const store = await openSqliteStore(file)
writeFileSync(join(readyDir, String(process.pid)), '')
while (readdirSync(readyDir).length < Number(processes)) await new Promise((r) => setTimeout(r, 2))
const claimed = []
let first = true
for (;;) {
  const token = 'p' + process.pid + '-' + claimed.length
  const batch = await store.queue.claim('p', { limit: 3, leaseMs: 60000, token })
  // After its first claim each process waits for the others' first claims: on a slow machine the
  // first to run could otherwise finish every run before another was scheduled at all.
  if (first) {
    first = false
    writeFileSync(join(claimedDir, String(process.pid)), '')
    while (readdirSync(claimedDir).length < Number(processes)) await new Promise((r) => setTimeout(r, 2))
  }
  if (batch.length === 0) break
  await Promise.all(batch.map((job) => store.queue.finish({ id: job.id, projectId: 'p', flow: job.flow, trigger: 'http', method: job.method,
    startedAt: new Date().toISOString(), durationMs: 1, status: 'success', httpStatus: 200, ports: [], failedNodeId: null, error: null,
    scheduledFor: null, replayOf: null }, 100000, undefined, { claimToken: job.claimToken, response: '{"status":200,"body":null}' })))
  claimed.push(...batch.map((job) => job.id))
}
await store.close()
console.log(JSON.stringify(claimed))
`

const dir = await mkdtemp(join(tmpdir(), 'flowctl-async-procs-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

// Skipped only when dist/ was not built (`npm test` builds first): the child processes import the built store.
describe.skipIf(!existsSync(BUILT_STORE))('async runs claimed by several processes on one SQLite file', () => {
  it('gives each queued run to exactly one process, and records each once', async () => {
    const file = join(dir, 'flowctl.db')
    const store = await openSqliteStore(file)
    const ids = Array.from({ length: RUNS }, (_, i) => `run-${String(i).padStart(3, '0')}`)
    await Promise.all(
      ids.map((id, i) =>
        store.queue.enqueue({ id, projectId: 'p', flow: 'f', method: 'POST', input: '{}', receivedAt: new Date(Date.UTC(2024, 0, 1) + i).toISOString() }),
      ),
    )
    await writeFile(join(dir, 'worker.mjs'), WORKER)
    const readyDir = join(dir, 'ready')
    await mkdir(readyDir)
    const claimedDir = join(dir, 'claimed')
    await mkdir(claimedDir)
    const outputs = await Promise.all(
      Array.from({ length: PROCESSES }, () => run('node', [join(dir, 'worker.mjs'), file, readyDir, String(PROCESSES), claimedDir])),
    )
    const perProcess = outputs.map((output) => JSON.parse(output.stdout) as string[])
    const all = perProcess.flat()
    expect(all.length).toBe(RUNS)
    expect(new Set(all)).toEqual(new Set(ids))
    // The work was shared (each process got some), not taken by whichever started first.
    expect(perProcess.filter((claimed) => claimed.length > 0).length).toBe(PROCESSES)
    expect((await store.history.listRuns({ projectId: 'p', limit: 1000 })).length).toBe(RUNS)
    expect((await store.queue.get('p', ids[0]!))?.status).toBe('success')
    await store.close()
  }, 60_000)
})
