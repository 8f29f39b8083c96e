// runTick against real SQLite stores, real projects loaded from YAML and real HTTP receivers.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { Project } from '../../src/model/project.js'
import { loadProject } from '../../src/project/load.js'
import { DueIndex } from '../../src/schedule/due-index.js'
import { runTick } from '../../src/schedule/tick.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { RunRecord, Store } from '../../src/model/store.js'
import { cleanupTempDirs, copyFixture, freePort, makeTempDir } from '../helpers.js'

const stores: Store[] = []
const servers: Server[] = []

async function openStore(file: string): Promise<Store> {
  const store = await openSqliteStore(file)
  stores.push(store)
  return store
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()))
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))))
})
afterAll(cleanupTempDirs)

/** A pinned wall clock: no test depends on the real time. */
const clockAt = (iso: string) => () => new Date(iso)
const quiet = { log: () => undefined }

async function loadExample(): Promise<{ dir: string; project: Project }> {
  const dir = await copyFixture('example')
  return { dir, project: await loadProject(dir, { env: {} }) }
}

/** A temp project from YAML text: flowctl.yaml plus flows/<name>.yaml files. */
async function writeProject(settings: string, flows: Record<string, string>, env = ''): Promise<{ dir: string; project: Project }> {
  const dir = await makeTempDir('flowctl-tick-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), settings)
  await writeFile(join(dir, '.env'), env)
  for (const [name, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', `${name}.yaml`), text)
  const project = await loadProject(dir, { env: {} })
  expect(project.problems.filter((p) => p.severity === 'error')).toEqual([])
  return { dir, project }
}

/** A flow whose http node calls a port nothing listens on, so every run fails at node `call`. */
function failingFlow(port: number, cron: string): string {
  return `name: Broken Sync
schedule: { cron: "${cron}", timezone: UTC }
nodes:
  - { id: start, type: start, name: Start, method: post, next: call }
  - id: call
    type: http
    name: Call
    method: get
    url: "http://127.0.0.1:${port}/nothing-here"
    timeoutMs: 2000
`
}

interface Received {
  url: string
  body: Record<string, unknown>
}

/** A real webhook receiver: answers each request with the next status of `statuses` (then 200). */
async function receiver(statuses: number[]): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = []
  const server = createServer((req: IncomingMessage, res) => {
    let text = ''
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')))
    req.on('end', () => {
      received.push({ url: req.url ?? '', body: JSON.parse(text) as Record<string, unknown> })
      res.statusCode = statuses.shift() ?? 200
      res.end('ok')
    })
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }
}

function runRecord(project: Project, flow: string, startedAt: string, status: 'success' | 'error', id: string): RunRecord {
  return {
    id,
    projectId: project.settings.projectId,
    flow,
    trigger: 'http',
    method: 'POST',
    startedAt,
    durationMs: 3,
    status,
    httpStatus: status === 'success' ? 201 : 500,
    ports: [],
    failedNodeId: status === 'error' ? 'save' : null,
    scheduledFor: null,
    replayOf: null,
    resumedFrom: null,
    error: status === 'error' ? 'boom' : null,
  }
}

describe('runTick: schedules', () => {
  it('runs the example nightly-cleanup at 03:00 Europe/Berlin (02:00Z in November), once', async () => {
    const { dir, project } = await loadExample()
    const store = await openStore(join(dir, 'tick.db'))
    const at = new Date('2026-11-21T02:00:00Z')
    const summary = await runTick({ targets: [{ project, store }], at, clock: clockAt('2026-11-21T02:00:07Z'), ...quiet })
    const runs = await store.history.listRuns({ projectId: 'shop' })
    expect(summary).toEqual({
      ok: true,
      at: '2026-11-21T02:00:00.000Z',
      ran: 1,
      errors: 0,
      digestsChecked: 1,
      digestsSent: 0,
      alertsChecked: 1,
      alertsSent: 0,
      dryRun: false,
      runs: [{ projectId: 'shop', flow: 'nightly-cleanup', scheduledFor: '2026-11-21T02:00:00.000Z', catchUp: false, runId: runs[0]?.id, status: 'success' }],
    })
    expect(runs).toHaveLength(1)
    // startedAt is the wall clock; scheduledFor the minute the run is for.
    expect(runs[0]).toMatchObject({
      flow: 'nightly-cleanup',
      trigger: 'cron',
      method: 'CRON',
      status: 'success',
      httpStatus: 204,
      startedAt: '2026-11-21T02:00:07.000Z',
      scheduledFor: '2026-11-21T02:00:00.000Z',
    })

    const heartbeat = await store.schedules.getHeartbeat('shop')
    expect(heartbeat?.at).toBe('2026-11-21T02:00:07.000Z') // the wall clock, not the tick minute
    expect(heartbeat?.summary).toMatchObject({ ok: true, at: '2026-11-21T02:00:00.000Z', ran: 1 })

    // The same minute again (a second tick): claimed already, nothing runs. The next minute: not due.
    const again = await runTick({ targets: [{ project, store }], at: new Date('2026-11-21T02:00:40Z'), clock: clockAt('2026-11-21T02:00:40Z'), ...quiet })
    expect(again).toMatchObject({ ok: true, at: '2026-11-21T02:00:00.000Z', ran: 0, errors: 0 })
    const later = await runTick({ targets: [{ project, store }], at: new Date('2026-11-21T02:01:00Z'), clock: clockAt('2026-11-21T02:01:00Z'), ...quiet })
    expect(later).toMatchObject({ ran: 0, errors: 0, at: '2026-11-21T02:01:00.000Z' })
    // 03:00 UTC is 04:00 in Berlin: not due either.
    const utcThree = await runTick({ targets: [{ project, store }], at: new Date('2026-11-21T03:00:00Z'), clock: clockAt('2026-11-21T03:00:00Z'), ...quiet })
    expect(utcThree.ran).toBe(0)
    expect(await store.history.listRuns({ projectId: 'shop' })).toHaveLength(1)
  })

  it('runs a schedule exactly once when 5 ticks race over two stores on the same SQLite file', async () => {
    const { dir, project } = await loadExample()
    const file = join(dir, 'shared.db')
    const first = await openStore(file)
    const second = await openStore(file)
    const at = new Date('2026-11-21T02:00:00Z')
    const index = DueIndex.fromProjects([project])
    const summaries = await Promise.all(
      [first, second, first, second, first].map((store, i) =>
        runTick({ targets: [{ project, store }], at, clock: clockAt('2026-11-21T02:00:01Z'), ...(i % 2 === 0 ? { index } : {}), ...quiet }),
      ),
    )
    expect(summaries.map((s) => s.ok)).toEqual([true, true, true, true, true])
    expect(summaries.reduce((sum, s) => sum + s.ran, 0)).toBe(1)
    const history = await second.history.listRuns({ projectId: 'shop', flow: 'nightly-cleanup' })
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({ trigger: 'cron', method: 'CRON' })
  })

  it('counts a failing flow in errors, records it with method CRON and trigger cron, and still answers', async () => {
    const closedPort = await freePort()
    const { project } = await writeProject('projectId: ops\nname: Ops\n', { 'broken-sync': failingFlow(closedPort, '*/5 * * * *') })
    const store = await openStore(':memory:')
    const summary = await runTick({ targets: [{ project, store }], at: new Date('2026-05-01T10:05:30Z'), clock: clockAt('2026-05-01T10:05:31Z'), ...quiet })
    expect(summary).toMatchObject({ ok: true, at: '2026-05-01T10:05:00.000Z', ran: 1, errors: 1 })
    const [run] = await store.history.listRuns({ projectId: 'ops' })
    expect(run).toMatchObject({ flow: 'broken-sync', trigger: 'cron', method: 'CRON', status: 'error', failedNodeId: 'call' })
    expect(run?.error).toBeTruthy()
  })

  it('reports a scheduled run that parked at a long wait as waiting, not success (SPEC §22)', async () => {
    const { project } = await writeProject('projectId: naps\nname: Naps\nlimits: { inlineWaitMs: 100 }\n', {
      nap: 'name: Nap\nschedule: { cron: "* * * * *", timezone: UTC }\nnodes:\n  - { id: start, type: start, name: Start, method: post, next: nap }\n  - { id: nap, type: wait, name: Nap, ms: 600000 }\n',
    })
    const store = await openStore(':memory:')
    const summary = await runTick({ targets: [{ project, store }], at: new Date('2026-05-01T10:05:00Z'), clock: clockAt('2026-05-01T10:05:01Z'), ...quiet })
    expect(summary).toMatchObject({ ok: true, ran: 1, errors: 0 })
    const [run] = await store.history.listRuns({ projectId: 'naps' })
    expect(run).toMatchObject({ flow: 'nap', status: 'waiting' })
    expect(summary.runs).toEqual([
      { projectId: 'naps', flow: 'nap', scheduledFor: '2026-05-01T10:05:00.000Z', catchUp: false, runId: run!.id, status: 'waiting' },
    ])
  })

  it('never runs a disabled schedule, and sums the summary over several projects', async () => {
    const closedPort = await freePort()
    const disabled = await writeProject('projectId: off\nname: Off\n', {
      quiet: 'name: Quiet\nschedule: { cron: "* * * * *", enabled: false }\nnodes:\n  - { id: start, type: start, name: Start, method: post }\n',
    })
    const failing = await writeProject('projectId: ops\nname: Ops\n', { 'broken-sync': failingFlow(closedPort, '* * * * *') })
    const { project: example } = await loadExample()
    const targets = [
      { project: disabled.project, store: await openStore(':memory:') },
      { project: failing.project, store: await openStore(':memory:') },
      { project: example, store: await openStore(':memory:') },
    ]
    const summary = await runTick({ targets, at: new Date('2026-11-21T02:00:00Z'), clock: clockAt('2026-11-21T02:00:00Z'), concurrency: 1, ...quiet })
    expect(summary).toMatchObject({
      ok: true,
      at: '2026-11-21T02:00:00.000Z',
      ran: 2,
      errors: 1,
      digestsChecked: 1,
      digestsSent: 0,
      alertsChecked: 1,
      alertsSent: 0,
      dryRun: false,
    })
    expect(summary.runs.map((r) => [r.projectId, r.flow, r.status])).toEqual([
      ['ops', 'broken-sync', 'error'],
      ['shop', 'nightly-cleanup', 'success'],
    ])
    expect(await targets[0]?.store.history.listRuns({ projectId: 'off' })).toEqual([])
  })
})

describe('runTick: catch-up and dry runs (SPEC §16)', () => {
  const flowWith = (catchUp: string, cron = '* * * * *', extra = '') => `name: Every Minute
schedule: { cron: "${cron}", timezone: UTC, catchUp: ${catchUp}${extra} }
nodes:
  - { id: start, type: start, name: Start, method: post }
`
  const minute = (k: number) => new Date(Date.UTC(2026, 10, 23, 9, k))
  const tickAt = (project: Project, store: Store, k: number, extra: { dryRun?: boolean } = {}) =>
    runTick({ targets: [{ project, store }], at: minute(k), clock: () => new Date(minute(k).getTime() + 5_000), ...quiet, ...extra })

  /** Ticks at minute 0, then (the timer down for minutes 1-10) at minute 11; the scheduled minutes that ran. */
  async function stoppedTimer(catchUp: string): Promise<string[]> {
    const { project } = await writeProject('projectId: cu\nname: Catch Up\n', { every: flowWith(catchUp) })
    const store = await openStore(':memory:')
    expect((await tickAt(project, store, 0)).ran).toBe(1)
    const after = await tickAt(project, store, 11)
    expect(after.runs.every((r) => r.status === 'success')).toBe(true)
    const runs = await store.history.listRuns({ projectId: 'cu', limit: 100 })
    expect(runs).toHaveLength(after.ran + 1)
    return runs.map((r) => r.scheduledFor?.slice(11, 16) ?? 'null').sort()
  }

  it('all: runs each missed due minute once, oldest first, then the current one', async () => {
    expect(await stoppedTimer('all')).toEqual(['09:00', '09:01', '09:02', '09:03', '09:04', '09:05', '09:06', '09:07', '09:08', '09:09', '09:10', '09:11'])
  })

  it('latest: runs the newest missed minute once', async () => {
    expect(await stoppedTimer('latest')).toEqual(['09:00', '09:10', '09:11'])
  })

  it('none: runs only the current minute', async () => {
    expect(await stoppedTimer('none')).toEqual(['09:00', '09:11'])
  })

  it('looks back at most catchUpMinutes, and only at minutes the schedule was due', async () => {
    const { project } = await writeProject('projectId: cu\nname: Catch Up\n', { every: flowWith('all', '*/5 * * * *', ', catchUpMinutes: 12') })
    const store = await openStore(':memory:')
    await tickAt(project, store, 0)
    const after = await tickAt(project, store, 30)
    expect(after.runs.map((r) => [r.scheduledFor.slice(11, 16), r.catchUp])).toEqual([
      ['09:20', true],
      ['09:25', true],
      ['09:30', false],
    ])
  })

  it('claims each missed minute once when two stores on one SQLite file catch up at once', async () => {
    const { dir, project } = await writeProject('projectId: cu\nname: Catch Up\n', { every: flowWith('all') })
    const file = join(dir, 'race.db')
    const stores = [await openStore(file), await openStore(file)]
    await tickAt(project, stores[0] as Store, 0)
    const results = await Promise.all([0, 1, 0, 1].map((i) => tickAt(project, stores[i] as Store, 11)))
    expect(results.reduce((sum, r) => sum + r.ran, 0)).toBe(11)
    const minutes = (await stores[0]!.history.listRuns({ projectId: 'cu', limit: 100 })).map((r) => r.scheduledFor)
    expect(new Set(minutes).size).toBe(12)
    expect(minutes).toHaveLength(12)
  })

  it('a dry run lists what would run (catch-up included) and writes nothing', async () => {
    const { project } = await writeProject('projectId: cu\nname: Catch Up\n', { every: flowWith('all') })
    const store = await openStore(':memory:')
    await tickAt(project, store, 0)
    const heartbeat = await store.schedules.getHeartbeat('cu')
    const dry = await tickAt(project, store, 3, { dryRun: true })
    expect(dry).toMatchObject({ dryRun: true, ran: 0, errors: 0, alertsChecked: 0, digestsChecked: 0 })
    expect(dry.runs.map((r) => [r.scheduledFor.slice(11, 16), r.catchUp, r.status, r.runId])).toEqual([
      ['09:01', true, 'would run', null],
      ['09:02', true, 'would run', null],
      ['09:03', false, 'would run', null],
    ])
    expect(await store.history.listRuns({ projectId: 'cu' })).toHaveLength(1)
    expect(await store.schedules.getHeartbeat('cu')).toEqual(heartbeat)
    expect(await store.schedules.getCursor('cu', 'tick:previous')).toBe(minute(0).toISOString())
    expect(await store.schedules.claimedMinutes('cu', 'flow:every-minute', minute(1).toISOString(), minute(3).toISOString())).toEqual([])
    // A minute that already ran is not listed by a dry run of it.
    expect((await tickAt(project, store, 0, { dryRun: true })).runs).toEqual([])
  })
})

describe('runTick: a broken store', () => {
  it('answers ok: false instead of throwing, and logs what failed', async () => {
    const { project } = await loadExample()
    const store = await openSqliteStore(':memory:')
    await store.close()
    const lines: string[] = []
    const summary = await runTick({
      targets: [{ project, store }],
      at: new Date('2026-11-21T02:00:00Z'),
      clock: clockAt('2026-11-21T02:00:00Z'),
      log: (line) => lines.push(line),
    })
    expect(summary).toMatchObject({ ok: false, at: '2026-11-21T02:00:00.000Z', ran: 0, alertsChecked: 1, digestsChecked: 1 })
    expect(lines.some((line) => line.includes('nightly-cleanup') && line.includes('claim'))).toBe(true)
    expect(lines.some((line) => line.includes('heartbeat'))).toBe(true)
  })
})

describe('runTick: alerts', () => {
  it('delivers an alert to a webhook, again on the next tick after a 500, and never twice', async () => {
    const closedPort = await freePort()
    const hook = await receiver([500])
    const settings = `projectId: ops
name: Ops
notify:
  channels:
    ops: { type: webhook, url: "${hook.url}/hook/\${secrets.HOOK_TOKEN}", timeoutMs: 3000 }
  alerts: [{ flows: ["*"], channel: ops }]
`
    const { project } = await writeProject(settings, { 'broken-sync': failingFlow(closedPort, '0 9 * * *') }, 'HOOK_TOKEN=tok-7f3a9c\n')
    const store = await openStore(':memory:')
    const tick = (minute: string) => runTick({ targets: [{ project, store }], at: new Date(minute), clock: clockAt(minute), ...quiet })

    const first = await tick('2026-05-01T09:00:00Z')
    expect(first).toMatchObject({ ran: 1, errors: 1, alertsChecked: 1, alertsSent: 0, ok: true })
    expect(hook.received).toHaveLength(1) // answered 500

    const second = await tick('2026-05-01T09:01:00Z')
    expect(second).toMatchObject({ ran: 0, errors: 0, alertsChecked: 1, alertsSent: 1 })
    expect(hook.received).toHaveLength(2)
    const [failedAttempt, delivered] = hook.received
    expect(delivered?.url).toBe('/hook/tok-7f3a9c') // the secret is resolved at send time only
    expect(delivered?.body).toEqual(failedAttempt?.body)
    const [run] = await store.history.listRuns({ projectId: 'ops' })
    expect(delivered?.body).toMatchObject({ kind: 'alert', projectId: 'ops', total: 1 })
    expect(delivered?.body.failures).toEqual([
      {
        flow: 'broken-sync',
        runId: run?.id,
        trigger: 'cron',
        failedNodeId: 'call',
        error: run?.error,
        startedAt: '2026-05-01T09:00:00.000Z',
        // The failed http call (SPEC §21): no answer came, so no status or body.
        http: { method: 'GET', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/nothing-here$/), status: null, body: null },
      },
    ])
    const text = String(delivered?.body.text)
    expect(text).toContain('broken-sync')
    expect(text).toContain(String(run?.id))
    expect(text).toContain('node call')
    expect(JSON.stringify(delivered?.body)).not.toContain('tok-7f3a9c')

    const third = await tick('2026-05-01T09:02:00Z')
    expect(third).toMatchObject({ alertsChecked: 1, alertsSent: 0 })
    expect(hook.received).toHaveLength(2)
  })

  it("alerts only failures after the first check, only of the rule's flows, one message per rule and tick", async () => {
    const { dir, project } = await loadExample() // alerts: [{ flows: ["*"], channel: local }] to .flowctl/outbox
    project.settings.notify.alerts.push({ flows: ['quote'], channel: 'local' })
    const store = await openStore(':memory:')
    const outbox = join(dir, '.flowctl', 'outbox')
    await store.history.recordRun(runRecord(project, 'create-order', '2026-05-01T08:00:00.000Z', 'error', 'old-failure'), 100)

    const first = await runTick({ targets: [{ project, store }], at: new Date('2026-05-01T10:00:00Z'), clock: clockAt('2026-05-01T10:00:00Z'), ...quiet })
    expect(first).toMatchObject({ alertsChecked: 2, alertsSent: 0 }) // the old failure is not alerted

    await store.history.recordRun(runRecord(project, 'create-order', '2026-05-01T10:00:20.000Z', 'error', 'new-1'), 100)
    await store.history.recordRun(runRecord(project, 'create-order', '2026-05-01T10:00:40.000Z', 'error', 'new-2'), 100)
    await store.history.recordRun(runRecord(project, 'create-order', '2026-05-01T10:00:50.000Z', 'success', 'fine'), 100)
    const second = await runTick({ targets: [{ project, store }], at: new Date('2026-05-01T10:01:00Z'), clock: clockAt('2026-05-01T10:01:00Z'), ...quiet })
    expect(second).toMatchObject({ alertsChecked: 2, alertsSent: 1 }) // the quote rule has nothing new

    const files = (await readdir(outbox)).filter((name) => name.endsWith('.json'))
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/^\d{8}T\d{9}Z-[\w-]+\.json$/)
    const message = JSON.parse(await readFile(join(outbox, files[0] as string), 'utf8')) as Record<string, unknown>
    expect(message).toMatchObject({ kind: 'alert', projectId: 'shop', channel: 'local', total: 2 })
    expect((message.failures as { runId: string }[]).map((f) => f.runId)).toEqual(['new-2', 'new-1'])

    const third = await runTick({ targets: [{ project, store }], at: new Date('2026-05-01T10:02:00Z'), clock: clockAt('2026-05-01T10:02:00Z'), ...quiet })
    expect(third).toMatchObject({ alertsSent: 0 })
    expect((await readdir(outbox)).filter((name) => name.endsWith('.json'))).toHaveLength(1)
  })

  it('keeps a message whose webhook secret is missing, with a clear error, and sends nothing', async () => {
    const settings = `projectId: ops
name: Ops
notify:
  channels:
    ops: { type: webhook, url: "\${secrets.NOT_SET}" }
  alerts: [{ flows: ["*"], channel: ops }]
`
    const { project } = await writeProject(settings, {})
    const store = await openStore(':memory:')
    await runTick({ targets: [{ project, store }], at: new Date('2026-05-01T10:00:00Z'), clock: clockAt('2026-05-01T10:00:00Z'), ...quiet })
    await store.history.recordRun(runRecord(project, 'anything', '2026-05-01T10:00:30.000Z', 'error', 'r1'), 100)
    const summary = await runTick({ targets: [{ project, store }], at: new Date('2026-05-01T10:01:00Z'), clock: clockAt('2026-05-01T10:01:00Z'), ...quiet })
    expect(summary).toMatchObject({ ok: true, alertsSent: 0 })
    const pending = await store.schedules.leaseOutbox('ops', 60_000, new Date('2026-05-01T10:01:30Z'))
    expect(pending).toHaveLength(1)
    expect(pending[0]).toMatchObject({ attempts: 1 })
    expect(pending[0]?.lastError).toMatch(/secret that is not set/)
  })
})

describe('runTick: digests', () => {
  it('sends the example digest only at its cron minute, once across racing ticks, with counts since the last one', async () => {
    const { dir, project } = await loadExample() // digests: create-order at "0 9 * * *" (UTC) to .flowctl/outbox
    const file = join(dir, 'digest.db')
    const first = await openStore(file)
    const second = await openStore(file)
    const outbox = join(dir, '.flowctl', 'outbox')
    const messages = async () =>
      Promise.all(
        (await readdir(outbox).catch(() => [] as string[]))
          .filter((name) => name.endsWith('.json'))
          .sort()
          .map(async (name) => JSON.parse(await readFile(join(outbox, name), 'utf8')) as Record<string, unknown>),
      )
    await first.history.recordRun(runRecord(project, 'create-order', '2026-05-01T07:00:00.000Z', 'success', 'a'), 100)
    await first.history.recordRun(runRecord(project, 'create-order', '2026-05-01T07:30:00.000Z', 'error', 'b'), 100)
    await first.history.recordRun(runRecord(project, 'create-order', '2026-05-01T08:00:00.000Z', 'success', 'c'), 100)
    await first.history.recordRun(runRecord(project, 'quote', '2026-05-01T08:10:00.000Z', 'success', 'not-in-digest'), 100)

    const before = await runTick({
      targets: [{ project, store: first }],
      at: new Date('2026-05-01T08:59:00Z'),
      clock: clockAt('2026-05-01T08:59:00Z'),
      ...quiet,
    })
    expect(before).toMatchObject({ digestsChecked: 1, digestsSent: 0 })

    const racing = await Promise.all(
      [first, second, first].map((store) =>
        runTick({ targets: [{ project, store }], at: new Date('2026-05-01T09:00:10Z'), clock: clockAt('2026-05-01T09:00:10Z'), ...quiet }),
      ),
    )
    expect(racing.every((s) => s.digestsChecked === 1)).toBe(true)
    expect(racing.reduce((sum, s) => sum + s.digestsSent, 0)).toBe(1)
    // The alert rule saw the failure "b" from before its first check: not alerted.
    expect(racing.reduce((sum, s) => sum + s.alertsSent, 0)).toBe(0)

    let sent = await messages()
    expect(sent).toHaveLength(1)
    expect(sent[0]).toMatchObject({ kind: 'digest', projectId: 'shop', at: '2026-05-01T09:00:00.000Z', since: null, counts: { success: 2, error: 1 } })
    expect((sent[0]!.latest as { runId: string }[]).map((r) => r.runId)).toEqual(['c', 'b', 'a'])
    expect(String(sent[0]?.text)).toMatch(/3 runs, 2 succeeded, 1 failed/)

    const after = await runTick({
      targets: [{ project, store: second }],
      at: new Date('2026-05-01T09:01:00Z'),
      clock: clockAt('2026-05-01T09:01:00Z'),
      ...quiet,
    })
    expect(after).toMatchObject({ digestsChecked: 1, digestsSent: 0 })

    // The next day's digest covers only the runs since the previous one.
    await first.history.recordRun(runRecord(project, 'create-order', '2026-05-01T12:00:00.000Z', 'success', 'd'), 100)
    const nextDay = await runTick({
      targets: [{ project, store: second }],
      at: new Date('2026-05-02T09:00:00Z'),
      clock: clockAt('2026-05-02T09:00:00Z'),
      ...quiet,
    })
    expect(nextDay).toMatchObject({ digestsSent: 1 })
    sent = await messages()
    expect(sent).toHaveLength(2)
    expect(sent[1]).toMatchObject({ kind: 'digest', since: '2026-05-01T08:00:00.000Z', counts: { success: 1, error: 0 } })
  })
})
