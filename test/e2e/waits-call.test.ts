// A callback wait inside a called flow (SPEC §22, §13) through a real `flowctl serve`, on the embedded
// store and on PostgreSQL: an async flow calls a flow that waits for a callback and returns a value;
// the whole run parks (history `waiting`), survives SIGKILL and a restart, and a POST to the resume
// URL finishes it with the caller's steps after the call seeing the called flow's answer (its End and
// its insert). The wait's timeout port inside the called flow, and a long sleep there, work too.
import Database from 'better-sqlite3'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { resumeUrlReceiver } from './resume-url-receiver.js'
import { cleanupTempDirs, eventually, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

afterAll(cleanupTempDirs)
pgSkipNotice('waits in called flows e2e')

const ORDER = `name: Order
nodes:
  - id: start
    type: start
    name: Start
    method: post
    respond: async
    inputs:
      body: { type: object, required: [n], properties: { n: { type: integer } } }
    next: ask
  - { id: ask, type: call, name: Ask, flow: APPROVAL, input: { n: "{{start.n}}" }, next: save }
  - { id: save, type: insert, name: Saved, collection: orders, document: { n: "{{start.n}}", approved: "{{ask.body.approved}}", by: "{{ask.body.by}}" }, next: done }
  - { id: done, type: end, name: Done, status: 200, body: { n: "{{start.n}}", approved: "{{ask.body.approved}}", by: "{{ask.body.by}}", askStatus: "{{ask.status}}" } }
`

const APPROVAL = `name: Approval
nodes:
  - id: start
    type: start
    name: Start
    http: false
    inputs:
      body: { type: object, required: [n], properties: { n: { type: integer } } }
    next: link
  - { id: link, type: http, name: Link, method: post, url: RECEIVER, body: { n: "{{start.n}}", url: "{{run.resumeUrl}}" }, next: wait }
  - id: wait
    type: wait
    name: Decision
    until: callback
    timeoutSeconds: TIMEOUT
    next: { out: yes, timeout: no }
  - { id: yes, type: end, name: Yes, status: 201, body: { approved: "{{decision.body.approved}}", by: "{{decision.body.by}}" } }
  - { id: no, type: end, name: No, status: 200, body: { approved: false, by: timeout } }
`

const NAP = `name: Nap order
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, next: inner }
  - { id: inner, type: call, name: Inner, flow: napper, next: done }
  - { id: done, type: end, name: Done, status: 200, body: { slept: "{{inner.body.slept}}" } }
`

const NAPPER = `name: Napper
nodes:
  - { id: start, type: start, name: Start, http: false, next: nap }
  - { id: nap, type: wait, name: Nap, ms: 1500, next: done }
  - { id: done, type: end, name: Done, status: 200, body: { slept: "{{nap.waitedMs}}" } }
`

const receiver = resumeUrlReceiver()

async function project(): Promise<string> {
  const dir = await makeTempDir('flowctl-waits-call-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: wc\nname: Waits in calls\nlimits: { runsPerMinutePerIp: 0, inlineWaitMs: 500 }\n')
  const approval = APPROVAL.replace('RECEIVER', receiver.url())
  await writeFile(join(dir, 'flows', 'order.yaml'), ORDER.replace('APPROVAL', 'approval'))
  await writeFile(join(dir, 'flows', 'approval.yaml'), approval.replace('TIMEOUT', '3600'))
  await writeFile(join(dir, 'flows', 'quick-order.yaml'), ORDER.replace('name: Order', 'name: Quick order').replace('APPROVAL', 'quick-approval'))
  await writeFile(join(dir, 'flows', 'quick-approval.yaml'), approval.replace('name: Approval', 'name: Quick approval').replace('TIMEOUT', '1'))
  await writeFile(join(dir, 'flows', 'nap-order.yaml'), NAP)
  await writeFile(join(dir, 'flows', 'napper.yaml'), NAPPER)
  return dir
}

interface Step {
  nodeId: string
  port: string | null
  output: unknown
  calls?: { flow: string; steps: Step[] }[]
}

interface RunJson {
  id: string
  status: string
  httpStatus: number | null
  trace: { steps: Step[] } | null
}

async function startRun(serve: StartedServe, slug: string, n: number): Promise<string> {
  const response = await fetch(`${serve.base}/api/run/wc/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ n }),
  })
  expect(response.status).toBe(202)
  return ((await response.json()) as { runId: string }).runId
}

async function untilStatus(serve: StartedServe, runId: string, status: string, timeoutMs = 15_000): Promise<RunJson> {
  let run: RunJson | null = null
  const read = async () => {
    const response = await fetch(`${serve.base}/api/runs/wc/${runId}`)
    return response.status === 200 ? ((await response.json()) as RunJson) : null
  }
  await eventually(async () => (run = await read().catch(() => null))?.status === status, timeoutMs, 50)
  return run!
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

async function resultOf(serve: StartedServe, runId: string): Promise<{ status: string; response: { status: number; body: unknown } | null }> {
  return (await (await fetch(`${serve.base}/api/result/wc/${runId}`)).json()) as { status: string; response: { status: number; body: unknown } | null }
}

async function scenario(dir: string, env: Record<string, string>): Promise<void> {
  const args = [dir, '--quiet', '--no-watch']
  let serve = await startServe(args, { env })
  try {
    const runId = await startRun(serve, 'order', 7)
    const parked = await untilStatus(serve, runId, 'waiting')
    expect(parked.httpStatus).toBeNull()
    expect(await resultOf(serve, runId)).toEqual({ runId, status: 'waiting', response: null })

    // Killed while parked inside the called flow, started again: the run still waits.
    serve.child.kill('SIGKILL')
    await serve.child.catch(() => undefined)
    serve = await startServe(args, { env })
    expect((await untilStatus(serve, runId, 'waiting')).status).toBe('waiting')
    const url = receiver.resumeUrlOf(7, serve)
    expect((await post(url.replace(/token=.*/, 'token=AAAA'), { approved: true })).status).toBe(401)

    const first = await post(url, { approved: true, by: 'ann' })
    expect(first.status).toBe(202)
    expect(await first.json()).toMatchObject({ ok: true, runId, status: 'resumed' })
    expect((await post(url, { approved: true, by: 'ann' })).status).toBe(409)

    // The called flow's End reached the call node; the caller's insert and End read it.
    const done = await untilStatus(serve, runId, 'success')
    expect(done.httpStatus).toBe(200)
    expect(await resultOf(serve, runId)).toMatchObject({ status: 'success', response: { body: { n: 7, approved: true, by: 'ann', askStatus: 201 } } })
    const ask = done.trace!.steps.find((step) => step.nodeId === 'ask')!
    expect(ask.output).toEqual({ status: 201, body: { approved: true, by: 'ann' } })
    const called = ask.calls![0]!
    expect(called.flow).toBe('approval')
    expect(called.steps.map((step) => step.nodeId)).toEqual(['start', 'link', 'wait', 'yes'])
    expect(called.steps[2]).toMatchObject({ port: 'out', output: { body: { approved: true, by: 'ann' } } })
    expect(done.trace!.steps.map((step) => step.nodeId)).toEqual(['start', 'ask', 'save', 'done'])

    // The timeout comes first inside the called flow: its port `timeout`, and a POST after it is 410.
    const late = await startRun(serve, 'quick-order', 8)
    await untilStatus(serve, late, 'waiting')
    const lateDone = await untilStatus(serve, late, 'success')
    const lateCall = lateDone.trace!.steps.find((step) => step.nodeId === 'ask')!.calls![0]!
    expect(lateCall.steps.find((step) => step.nodeId === 'wait')!.port).toBe('timeout')
    expect((await resultOf(serve, late)).response!.body).toEqual({ n: 8, approved: false, by: 'timeout', askStatus: 200 })
    expect((await post(receiver.resumeUrlOf(8, serve), { approved: true })).status).toBe(410)

    // A long sleep in a called flow parks the run too and goes on when due.
    const nap = await startRun(serve, 'nap-order', 9)
    await untilStatus(serve, nap, 'waiting')
    await untilStatus(serve, nap, 'success')
    const slept = ((await resultOf(serve, nap)).response!.body as { slept: number }).slept
    expect(slept).toBeGreaterThanOrEqual(1400)
  } finally {
    serve.child.kill('SIGTERM')
    await serve.child.catch(() => undefined)
  }
}

describe('a callback wait in a called flow on the embedded store', () => {
  it('parks the run, survives SIGKILL, and resumes into the caller with the called flow’s answer', async () => {
    const dir = await project()
    await scenario(dir, {})
    const db = new Database(join(dir, '.flowctl', 'flowctl.db'), { readonly: true })
    try {
      const orders = db.prepare("SELECT body FROM documents WHERE collection = 'orders' ORDER BY body").all() as { body: string }[]
      expect(orders.map((row) => JSON.parse(row.body) as unknown)).toEqual([
        { n: 7, approved: true, by: 'ann' },
        { n: 8, approved: false, by: 'timeout' },
      ])
      expect(db.prepare('SELECT status, count(*) AS n FROM parked_runs GROUP BY status').all()).toEqual([{ status: 'done', n: 3 }])
    } finally {
      db.close()
    }
  }, 90_000)
})

describe.skipIf(!PG_URL)('a callback wait in a called flow on PostgreSQL', () => {
  it('parks the run, survives SIGKILL, and resumes into the caller with the called flow’s answer', async () => {
    const database = await createTestDatabase()
    try {
      await scenario(await project(), { FLOWCTL_DATABASE_URL: database.url })
    } finally {
      await database.drop()
    }
  }, 90_000)
})
