// Async runs survive SIGKILL (SPEC §12, `respond: async`): every run acknowledged with 202 reaches
// `success` exactly once — one history record per run id, none missing, and one document per run
// (the flow inserts one). Two `serve` instances on one PostgreSQL database with one SIGKILLed midway
// and restarted; and one instance on the embedded SQLite store, SIGKILLed and restarted.
import Database from 'better-sqlite3'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, eventually, flowctl, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

afterAll(cleanupTempDirs)
pgSkipNotice('async runs e2e')

const TOKEN = 'async-e2e-token'
const RUNS = 200

/** A project whose one flow is async: it stores a document per run, waits a little (so runs are midway when killed), answers 201. */
async function asyncProject(): Promise<string> {
  const dir = await makeTempDir('flowctl-async-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: jobs\nname: Jobs\nlimits: { runsPerMinutePerIp: 0, asyncConcurrency: 4 }\n')
  await writeFile(
    join(dir, 'flows', 'work.yaml'),
    `name: Work
nodes:
  - id: start
    type: start
    name: Start
    method: post
    respond: async
    auth: { type: bearer, token: ${TOKEN} }
    inputs:
      body: { type: object, required: [n], properties: { n: { type: integer } } }
    next: save
  - { id: save, type: insert, name: Save, collection: jobs, document: { n: "{{start.n}}", run: "{{run.id}}" }, next: pause }
  - { id: pause, type: wait, name: Pause, ms: 80, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { n: "{{start.n}}", id: "{{save.insertedId}}" } }
`,
  )
  return dir
}

class Instance {
  base = ''
  process: ResultPromise | null = null
  /** stderr of the processes this instance ran before the current one. */
  private earlierLog = ''
  private current: StartedServe | null = null

  constructor(
    private readonly project: string,
    private readonly env: Record<string, string>,
  ) {}

  /** What every process of this instance wrote to stderr, the current one's so far included. */
  get log(): string {
    return this.earlierLog + (this.current?.stderr() ?? '')
  }

  /** Starts serve on a port it picks itself (see `startServe`): a restart gets a new base URL. */
  async start(): Promise<void> {
    this.earlierLog = this.log
    this.current = null
    this.current = await startServe([this.project, '--quiet', '--no-watch'], { env: this.env })
    this.process = this.current.child
    this.base = this.current.base
  }

  async kill(): Promise<void> {
    this.process?.kill('SIGKILL')
    await this.process
    this.process = null
  }

  async stop(): Promise<void> {
    this.process?.kill('SIGTERM')
    await this.process
    this.process = null
  }
}

/** Sends run n to one of `targets()`, trying the next one when an instance is gone; the acknowledged run id. */
async function queueRun(n: number, targets: () => Instance[]): Promise<string> {
  const deadline = Date.now() + 30_000
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const live = targets()
    if (live.length === 0) {
      await new Promise((r) => setTimeout(r, 50)) // the only instance is restarting
      continue
    }
    const instance = live[(n + attempt) % live.length]!
    try {
      const response = await fetch(`${instance.base}/api/run/jobs/work`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ n }),
      })
      const body = (await response.json()) as { ok: boolean; runId: string; status: string }
      expect(response.status).toBe(202)
      expect(response.headers.get('location')).toBe(`/api/result/jobs/${body.runId}`)
      expect(body).toEqual({ ok: true, runId: body.runId, status: 'queued' })
      return body.runId
    } catch (error) {
      if (!(error instanceof TypeError)) throw error // a connection refused or reset: the instance was killed
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  throw new Error(`run ${n} was never acknowledged`)
}

/** Queues RUNS runs, 8 at a time; `midway` is called once half of them were acknowledged. */
async function queueAll(targets: () => Instance[], midway: () => Promise<void>): Promise<Map<number, string>> {
  const acknowledged = new Map<number, string>()
  let next = 0
  let midwayDone: Promise<void> | null = null
  const sender = async () => {
    while (next < RUNS) {
      const n = next++
      acknowledged.set(n, await queueRun(n, targets))
      if (acknowledged.size === RUNS / 2 && !midwayDone) midwayDone = midway()
    }
  }
  await Promise.all(Array.from({ length: 8 }, sender))
  await midwayDone
  return acknowledged
}

async function resultOf(instance: Instance, runId: string): Promise<{ status: string; response: { status: number; body: { n: number } } | null }> {
  const response = await fetch(`${instance.base}/api/result/jobs/${runId}`, { headers: { authorization: `Bearer ${TOKEN}` } })
  expect(response.status).toBe(200)
  return (await response.json()) as { status: string; response: { status: number; body: { n: number } } | null }
}

/** Every acknowledged run is recorded once with success, and stored its one document. */
async function expectExactlyOnce(project: string, env: Record<string, string>, acknowledged: Map<number, string>, reader: Instance): Promise<void> {
  const runIds = [...acknowledged.values()]
  // Lease of a killed instance's claims: 10 s; then any instance takes them over.
  await eventually(
    async () => {
      const states = await Promise.all(runIds.map((id) => resultOf(reader, id)))
      return states.every((state) => state.status === 'success' || state.status === 'error')
    },
    45_000,
    500,
  )
  for (const [n, runId] of acknowledged) {
    const state = await resultOf(reader, runId)
    expect({ runId, state: state.status, response: state.response?.status, n: state.response?.body.n }).toEqual({ runId, state: 'success', response: 201, n })
  }

  const history = await flowctl(['history', '--project', project, '--flow', 'work', '--limit', '100000', '--json'], { env })
  expect(history.exitCode).toBe(0)
  const records = JSON.parse(history.stdout) as { id: string; status: string; method: string }[]
  const counts = new Map<string, number>()
  for (const record of records) counts.set(record.id, (counts.get(record.id) ?? 0) + 1)
  const missing = runIds.filter((id) => !counts.has(id))
  const doubled = [...counts].filter(([, count]) => count > 1)
  expect({ missing, doubled }).toEqual({ missing: [], doubled: [] })
  expect(records.filter((record) => runIds.includes(record.id)).every((record) => record.status === 'success' && record.method === 'POST')).toBe(true)

  // One document per run: a run killed after its insert and run again keeps the first document. A
  // request in flight when its instance was killed may have been queued without its 202 reaching
  // the client (which then sent it again): that run is recorded too, and has its own document.
  const documents = await flowctl(['documents', 'jobs', '--project', project, '--limit', '1000', '--json'], { env })
  expect(documents.exitCode).toBe(0)
  const perRun = new Map<string, number>()
  for (const document of (JSON.parse(documents.stdout) as { documents: { run: string }[] }).documents)
    perRun.set(document.run, (perRun.get(document.run) ?? 0) + 1)
  const docMissing = runIds.filter((id) => !perRun.has(id))
  const docDoubled = [...perRun].filter(([, count]) => count > 1)
  const docWithoutRun = [...perRun.keys()].filter((id) => !counts.has(id))
  expect({ docMissing, docDoubled, docWithoutRun }).toEqual({ docMissing: [], docDoubled: [], docWithoutRun: [] })
}

describe('async runs survive SIGKILL and run exactly once', () => {
  // Skipped without FLOWCTL_TEST_DATABASE_URL: a fresh machine has no PostgreSQL (notice printed above).
  it.skipIf(!PG_URL)(
    'two serve instances on one PostgreSQL database, one killed midway and restarted',
    async () => {
      const db = await createTestDatabase()
      const project = await asyncProject()
      const env = { FLOWCTL_DATABASE_URL: db.url }
      const a = new Instance(project, env)
      const b = new Instance(project, env)
      try {
        await Promise.all([a.start(), b.start()])
        let targets = [a, b]
        const acknowledged = await queueAll(
          () => targets,
          async () => {
            // Killed with runs claimed and midway (inserted, waiting): B goes on; A comes back later.
            await a.kill()
            targets = [b]
            await new Promise((r) => setTimeout(r, 300))
            await a.start()
            targets = [a, b]
          },
        )
        expect(acknowledged.size).toBe(RUNS)
        await expectExactlyOnce(project, env, acknowledged, b)
        // The killed instance's claims were taken over once their lease ran out.
        expect(a.log + b.log).toMatch(/taken over \(attempt 2/)
      } finally {
        await Promise.all([a.stop(), b.stop()])
        await db.drop()
      }
    },
    90_000,
  )

  it('one serve instance on the embedded SQLite store, killed midway and restarted', async () => {
    const project = await asyncProject()
    const server = new Instance(project, {})
    try {
      await server.start()
      let up = true
      let claimedAtKill = -1
      const acknowledged = await queueAll(
        () => (up ? [server] : []),
        async () => {
          up = false
          await server.kill()
          // What the killed process left claimed and unfinished (read from the file, as a restart would).
          const db = new Database(join(project, '.flowctl', 'flowctl.db'), { readonly: true })
          claimedAtKill = (db.prepare("SELECT count(*) AS n FROM async_runs WHERE status = 'running'").get() as { n: number }).n
          db.close()
          await server.start()
          up = true
        },
      )
      expect(acknowledged.size).toBe(RUNS)
      // Killed midway: runs were claimed and unfinished, and the restarted process took them over.
      expect(claimedAtKill).toBeGreaterThan(0)
      await expectExactlyOnce(project, {}, acknowledged, server)
      expect(server.log.match(/taken over \(attempt 2/g)?.length).toBe(claimedAtKill)
    } finally {
      await server.stop()
    }
  }, 90_000)
})
