// Runs that wait for the world (SPEC §22) through a real `flowctl serve`, on the embedded store and
// on PostgreSQL: a callback wait parks the run (history status `waiting`), survives SIGKILL and a
// restart, and a POST to its resume URL finishes it with the callback's body; a second POST is 409,
// a wrong token 401, a wait past its timeout goes on at port `timeout` (and a late POST is 410); a
// long sleep parks and resumes when due. On PostgreSQL, 100 parked runs resumed through either of
// two instances each finish exactly once (one record, one document each).
import Database from 'better-sqlite3'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { resumeUrlReceiver } from './resume-url-receiver.js'
import { cleanupTempDirs, eventually, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

afterAll(cleanupTempDirs)
pgSkipNotice('durable waits e2e')

const FLOW = `name: Approve
nodes:
  - id: start
    type: start
    name: Start
    method: post
    respond: async
    inputs:
      body: { type: object, required: [n], properties: { n: { type: integer } } }
    next: link
  - { id: link, type: http, name: Link, method: post, url: RECEIVER, body: { n: "{{start.n}}", url: "{{run.resumeUrl}}" }, next: wait }
  - id: wait
    type: wait
    name: Decision
    until: callback
    timeoutSeconds: TIMEOUT
    next: { out: save, timeout: late }
  - { id: save, type: insert, name: Saved, collection: decisions, document: { n: "{{start.n}}", approved: "{{decision.body.approved}}" }, next: done }
  - { id: done, type: end, name: Done, status: 200, body: { n: "{{start.n}}", approved: "{{decision.body.approved}}", at: "{{decision.receivedAt}}" } }
  - { id: late, type: end, name: Late, status: 200, body: { late: true, n: "{{start.n}}" } }
`

const SLEEP_FLOW = `name: Nap
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, next: nap }
  - { id: nap, type: wait, name: Nap, ms: 1500, next: done }
  - { id: done, type: end, name: Done, status: 200, body: { slept: "{{nap.waitedMs}}" } }
`

const receiver = resumeUrlReceiver()

async function project(database?: string): Promise<string> {
  const dir = await makeTempDir('flowctl-waits-')
  await mkdir(join(dir, 'flows'))
  const settings = `projectId: waits\nname: Waits\nlimits: { runsPerMinutePerIp: 0, inlineWaitMs: 500 }\n${database ? `database: ${database}\n` : ''}`
  await writeFile(join(dir, 'flowctl.yaml'), settings)
  const flow = FLOW.replace('RECEIVER', receiver.url())
  await writeFile(join(dir, 'flows', 'approve.yaml'), flow.replace('TIMEOUT', '3600'))
  await writeFile(join(dir, 'flows', 'quick.yaml'), flow.replace('name: Approve', 'name: Quick').replace('TIMEOUT', '1'))
  await writeFile(join(dir, 'flows', 'nap.yaml'), SLEEP_FLOW)
  return dir
}

interface RunJson {
  id: string
  status: string
  httpStatus: number | null
  trace: { steps: { nodeId: string; port: string | null; output: unknown }[] } | null
}

async function startRun(serve: StartedServe, slug: string, n: number): Promise<string> {
  const response = await fetch(`${serve.base}/api/run/waits/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ n }),
  })
  expect(response.status).toBe(202)
  return ((await response.json()) as { runId: string }).runId
}

async function runOf(serve: StartedServe, runId: string): Promise<RunJson> {
  const response = await fetch(`${serve.base}/api/runs/waits/${runId}`)
  expect(response.status).toBe(200)
  return (await response.json()) as RunJson
}

async function untilStatus(serve: StartedServe, runId: string, status: string, timeoutMs = 15_000): Promise<RunJson> {
  let run: RunJson | null = null
  await eventually(async () => (run = await runOf(serve, runId).catch(() => null))?.status === status, timeoutMs, 50)
  return run!
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

async function callbackScenario(dir: string, env: Record<string, string>): Promise<void> {
  let serve = await startServe([dir, '--quiet', '--no-watch'], { env })
  try {
    const runId = await startRun(serve, 'approve', 7)
    const parked = await untilStatus(serve, runId, 'waiting')
    expect(parked.httpStatus).toBeNull()
    const result = await (await fetch(`${serve.base}/api/result/waits/${runId}`)).json()
    expect(result).toEqual({ runId, status: 'waiting', response: null })

    // Killed while the run is parked, started again: the run is still there and still waits.
    serve.child.kill('SIGKILL')
    await serve.child.catch(() => undefined)
    serve = await startServe([dir, '--quiet', '--no-watch'], { env })
    expect((await runOf(serve, runId)).status).toBe('waiting')
    const url = receiver.resumeUrlOf(7, serve)
    // The token is a credential: stored traces show it masked, like a secret.
    const token = new URL(url).searchParams.get('token')!
    expect(token).toMatch(/^[\w-]{43}$/)
    expect(JSON.stringify(parked.trace)).not.toContain(token)

    const wrong = await post(url.replace(/token=.*/, 'token=AAAA'), { approved: true })
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toEqual({ ok: false, errors: ['invalid token'] })
    expect((await post(url.replace(/\?token=.*/, ''), { approved: true })).status).toBe(401)
    const page = await fetch(url)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('Approve')

    const first = await post(url, { approved: true, comment: 'fine' })
    expect(first.status).toBe(202)
    expect(await first.json()).toMatchObject({ ok: true, runId, status: 'resumed' })
    const second = await post(url, { approved: true, comment: 'fine' })
    expect(second.status).toBe(409)
    expect(await second.json()).toEqual({ ok: false, errors: ['the run was already resumed'] })

    const done = await untilStatus(serve, runId, 'success')
    expect(done.httpStatus).toBe(200)
    const wait = done.trace!.steps.find((step) => step.nodeId === 'wait')!
    expect(wait.port).toBe('out')
    expect(wait.output).toMatchObject({ body: { approved: true, comment: 'fine' } })
    const answer = (await (await fetch(`${serve.base}/api/result/waits/${runId}`)).json()) as { status: string; response: { body: unknown } }
    expect(answer.status).toBe('success')
    expect(answer.response.body).toMatchObject({ n: 7, approved: true })
    expect((await post(url, { approved: false })).status).toBe(409)

    // The timeout comes first: port `timeout`, and a POST after it is 410.
    const late = await startRun(serve, 'quick', 8)
    await untilStatus(serve, late, 'waiting')
    const lateDone = await untilStatus(serve, late, 'success')
    expect(lateDone.trace!.steps.find((step) => step.nodeId === 'wait')!.port).toBe('timeout')
    expect(lateDone.trace!.steps.at(-1)!.output).toMatchObject({ body: { late: true, n: 8 } })
    const gone = await post(receiver.resumeUrlOf(8, serve), { approved: true })
    expect(gone.status).toBe(410)

    // A long sleep parks too and goes on when due.
    const nap = await startRun(serve, 'nap', 9)
    await untilStatus(serve, nap, 'waiting')
    const napped = await untilStatus(serve, nap, 'success')
    const slept = (napped.trace!.steps.at(-1)!.output as { body: { slept: number } }).body.slept
    expect(slept).toBeGreaterThanOrEqual(1400)

    const metrics = await (await fetch(`${serve.base}/metrics`)).text()
    expect(metrics).toMatch(/flowctl_waiting_runs\{project="waits"\} 0/)
  } finally {
    serve.child.kill('SIGTERM')
    await serve.child.catch(() => undefined)
  }
}

describe('durable waits on the embedded store', () => {
  it('parks, survives SIGKILL, resumes once with the callback body; 401, 409, 410 and timeouts', async () => {
    const dir = await project()
    await callbackScenario(dir, {})
    const db = new Database(join(dir, '.flowctl', 'flowctl.db'), { readonly: true })
    try {
      expect(db.prepare("SELECT count(*) AS n FROM documents WHERE collection = 'decisions'").get()).toEqual({ n: 1 })
      expect(db.prepare('SELECT status, count(*) AS n FROM parked_runs GROUP BY status').all()).toEqual([{ status: 'done', n: 3 }])
    } finally {
      db.close()
    }
  }, 90_000)
})

describe.skipIf(!PG_URL)('durable waits on PostgreSQL', () => {
  it('parks, survives SIGKILL, resumes once with the callback body; 401, 409, 410 and timeouts', async () => {
    const database = await createTestDatabase()
    try {
      await callbackScenario(await project(), { FLOWCTL_DATABASE_URL: database.url })
    } finally {
      await database.drop()
    }
  }, 90_000)

  it('100 parked runs resumed through either of two instances each finish exactly once', async () => {
    const database = await createTestDatabase()
    const env = { FLOWCTL_DATABASE_URL: database.url }
    const dir = await project()
    const serves = [await startServe([dir, '--quiet', '--no-watch'], { env }), await startServe([dir, '--quiet', '--no-watch'], { env })]
    try {
      const ids = await Promise.all(Array.from({ length: 100 }, (_, n) => startRun(serves[n % 2]!, 'approve', n)))
      await Promise.all(ids.map((id) => untilStatus(serves[0]!, id, 'waiting', 30_000)))
      // Each run's resume URL posted to both instances at once: one wins, the other gets 409.
      const answers = await Promise.all(
        ids.flatMap((_, n) => [
          post(receiver.resumeUrlOf(n, serves[n % 2]!), { approved: n % 3 === 0 }),
          post(receiver.resumeUrlOf(n, serves[(n + 1) % 2]!), { approved: n % 3 === 0 }),
        ]),
      )
      const statuses = answers.map((answer) => answer.status).sort()
      expect(statuses.filter((status) => status === 202)).toHaveLength(100)
      expect(statuses.filter((status) => status === 409)).toHaveLength(100)
      await Promise.all(ids.map((id, n) => untilStatus(serves[n % 2]!, id, 'success', 30_000)))

      const { default: pg } = await import('pg')
      const client = new pg.Client({ connectionString: database.url })
      await client.connect()
      try {
        await client.query('SET search_path = flowctl')
        const runs = await client.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE flow = 'approve' AND status = 'success'`)
        expect(Number(runs.rows[0]!.n)).toBe(100)
        const documents = await client.query<{ n: string; runs: string }>(
          `SELECT count(*) AS n, count(DISTINCT body->>'n') AS runs FROM documents WHERE collection = 'decisions'`,
        )
        expect(documents.rows[0]).toEqual({ n: '100', runs: '100' })
        const done = await client.query<{ n: string }>(`SELECT count(*) AS n FROM parked_runs WHERE status = 'done'`)
        expect(Number(done.rows[0]!.n)).toBe(100)
      } finally {
        await client.end()
      }
    } finally {
      for (const serve of serves) serve.child.kill('SIGTERM')
      await Promise.all(serves.map((serve) => serve.child.catch(() => undefined)))
      await database.drop()
    }
  }, 120_000)
})
