// Loading the example project: settings with defaults, flows, StartInfo, schedules, secrets.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadProject } from '../../src/project/load.js'
import { DEFAULT_LIMITS } from '../../src/model/project.js'
import { EXAMPLE_FLOW_SLUGS } from '../helpers.js'

const ROOT = join(import.meta.dirname, '..', '..')
const EXAMPLE = join(ROOT, 'fixtures', 'example')
const temps: string[] = []

async function tempProject(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'flowctl-load-'))
  temps.push(dir)
  for (const [file, text] of Object.entries(files)) {
    const path = join(dir, file)
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, text)
  }
  return dir
}

afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

describe('loadProject(fixtures/example)', () => {
  it('loads 10 flows without errors', async () => {
    const project = await loadProject(EXAMPLE, { env: {} })
    expect(project.dir).toBe(EXAMPLE)
    expect([...project.flows.keys()]).toEqual(EXAMPLE_FLOW_SLUGS)
    expect(project.problems.filter((p) => p.severity === 'error')).toEqual([])
  })

  it('reads the settings with defaults', async () => {
    const { settings } = await loadProject(EXAMPLE, { env: {} })
    expect(settings).toMatchObject({ projectId: 'shop', name: 'Shop API', flows: 'flows', timezone: 'UTC', database: 'embedded', secrets: '.env' })
    expect(settings.limits).toEqual({ ...DEFAULT_LIMITS, runsPerMinutePerIp: 600 })
    expect(settings.notify.channels).toEqual({ local: { type: 'file', path: '.flowctl/outbox' } })
    expect(settings.notify.alerts).toEqual([{ flows: ['*'], channel: 'local' }])
    expect(settings.notify.digests).toEqual([{ flows: ['create-order'], cron: '0 9 * * *', channel: 'local', timezone: 'UTC' }])
  })

  it('builds StartInfo, nodes and schedules', async () => {
    const project = await loadProject(EXAMPLE, { env: {} })
    const order = project.flows.get('create-order')
    expect(order).toMatchObject({ name: 'Create Order', description: 'Takes an order and stores it.', file: 'flows/create-order.yaml', schedule: null })
    expect(order?.version).toMatch(/^[0-9a-f]{40}$/)
    expect(order?.start).toMatchObject({ method: 'post', auth: { type: 'bearer', token: '${secrets.ORDERS_TOKEN}' }, pathParams: [] })
    expect(Object.keys(order?.start?.inputs ?? {})).toEqual(['body', 'headers'])
    const check = order?.nodesById.get('check')
    expect(check).toMatchObject({
      type: 'if',
      name: 'Big Order',
      refName: 'big_order',
      next: { true: 'save_big', false: 'save' },
      pos: { line: 21, column: 5 },
    })
    expect(check?.settings).toEqual({ condition: { left: '{{start.qty}}', op: 'gt', right: 10 } })
    expect(order?.nodesById.get('start')?.next).toEqual({ out: 'check' })

    const status = project.flows.get('order-status')
    expect(status?.start).toMatchObject({ method: 'get', auth: null, pathParams: ['state'] })
    expect(project.flows.get('nightly-cleanup')?.schedule).toEqual({
      cron: '0 3 * * *',
      enabled: true,
      timezone: 'Europe/Berlin',
      input: { reason: 'nightly' },
      catchUp: 'none',
      catchUpMinutes: 60,
    })
  })

  it('loads secrets from the dotenv file, overridden by FLOWCTL_SECRET_*', async () => {
    const plain = await loadProject(EXAMPLE, { env: {} })
    expect(plain.secrets.get('ORDERS_TOKEN')).toBe('dev-orders-token-change-me')
    const overridden = await loadProject(EXAMPLE, { env: { FLOWCTL_SECRET_ORDERS_TOKEN: 'other' } })
    expect(overridden.secrets.get('ORDERS_TOKEN')).toBe('other')
  })
})

describe('loadProject defaults', () => {
  const flow = (extra = '') =>
    `name: Ping\n${extra}nodes:\n  - id: start\n    type: start\n    name: Start\n    next: done\n  - id: done\n    type: end\n    name: Done\n`

  it('fills every default of flowctl.yaml, Start and schedule', async () => {
    const dir = await tempProject({
      'flowctl.yaml':
        'projectId: p1\nname: P\ntimezone: Asia/Tokyo\nnotify:\n  channels:\n    hook: { type: webhook, url: "${secrets.HOOK}" }\n  digests:\n    - { flows: "*", cron: "@daily", channel: hook }\n',
      'flows/ping.yml': flow('schedule: { cron: "@hourly" }\n').replace('    next: done\n', '    auth: { type: apiKey, key: k }\n    next: done\n'),
    })
    const project = await loadProject(dir, { env: {} })
    expect(project.settings).toMatchObject({ flows: 'flows', database: 'embedded', secrets: '.env', limits: DEFAULT_LIMITS, history: { keep: 'all' } })
    expect(project.settings.notify).toEqual({
      channels: { hook: { type: 'webhook', url: '${secrets.HOOK}', timeoutMs: 10_000 } },
      alerts: [],
      digests: [{ flows: ['*'], cron: '@daily', channel: 'hook', timezone: 'Asia/Tokyo' }],
    })
    const ping = project.flows.get('ping')
    expect(ping?.start).toMatchObject({ method: 'post', auth: { type: 'apiKey', key: 'k', header: 'X-API-Key' }, inputs: {}, pathParams: [] })
    expect(ping?.schedule).toEqual({ cron: '@hourly', enabled: true, timezone: 'Asia/Tokyo', input: {}, catchUp: 'none', catchUpMinutes: 60 })
  })

  it.each([
    ['history: { keep: failed }\nlimits: { traceBytes: 4096 }\n', { keep: 'failed', traceBytes: 4096 }, []],
    ['history: { keep: none }\n', { keep: 'none', traceBytes: 65_536 }, []],
    [
      'history: { keep: sometimes }\n',
      { keep: 'all', traceBytes: 65_536 },
      ['flowctl.yaml:3:18: history.keep must be one of: all, failed, none (not "sometimes")'],
    ],
    ['limits: { traceBytes: 10 }\n', { keep: 'all', traceBytes: 10 }, ['flowctl.yaml:3:23: limits.traceBytes must be >= 1024']],
  ])('reads history.keep and limits.traceBytes: %s', async (extra, expected, problems) => {
    const dir = await tempProject({ 'flowctl.yaml': `projectId: p1\nname: P\n${extra}`, 'flows/ping.yml': flow('') })
    const project = await loadProject(dir, { env: {} }).catch((error: { problems?: unknown[] }) => error)
    if (problems.length) {
      const found = ((project as { problems?: { file: string; line: number; column: number; message: string }[] }).problems ?? []).map(
        (p) => `${p.file}:${p.line}:${p.column}: ${p.message}`,
      )
      expect(found).toEqual(problems)
      return
    }
    const loaded = project as Awaited<ReturnType<typeof loadProject>>
    expect({ keep: loaded.settings.history.keep, traceBytes: loaded.settings.limits.traceBytes }).toEqual(expected)
  })

  it('takes the slug from the file name when the flow has no name, and reads the flows folder setting', async () => {
    const dir = await tempProject({
      'flowctl.yaml': 'projectId: p2\nname: P\nflows: pipelines\n',
      'pipelines/Hello World.yaml': flow().replace('name: Ping\n', ''),
      'pipelines/notes.txt': 'not a flow',
    })
    const project = await loadProject(dir, { env: {} })
    expect([...project.flows.keys()]).toEqual(['hello-world'])
    expect(project.flows.get('hello-world')?.file).toBe('pipelines/Hello World.yaml')
  })

  it('warns when the flows folder does not exist', async () => {
    const dir = await tempProject({ 'flowctl.yaml': 'projectId: p3\nname: P\n' })
    const project = await loadProject(dir, { env: {} })
    expect(project.flows.size).toBe(0)
    expect(project.problems).toMatchObject([{ file: 'flowctl.yaml', severity: 'warning', message: expect.stringContaining('does not exist') }])
  })

  it('reports problems of several files at once, sorted by file, line and column', async () => {
    const dir = await tempProject({
      'flowctl.yaml': 'projectId: p4\nname: P\n',
      'flows/b.yaml': flow().replace('name: Ping', 'name: Pong').replace('name: Done', 'name: Done\n    colour: red'),
      'flows/a.yaml': flow().replace('next: done', 'next: nowhere'),
    })
    const project = await loadProject(dir, { env: {} })
    expect(project.problems.map((p) => `${p.file}:${p.line}:${p.column}`)).toEqual(['flows/a.yaml:6:11', 'flows/a.yaml:7:9', 'flows/b.yaml:10:5'])
    expect(project.flows.size).toBe(0)
  })
})
