// End-to-end: the real `flowctl` binary against temp copies of fixtures/example.
import { existsSync } from 'node:fs'
import { readFile, rm, writeFile, readdir } from 'node:fs/promises'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, makeTempDir, ROOT } from '../helpers.js'

afterAll(cleanupTempDirs)

describe('flowctl basics', () => {
  it('--version prints the package version', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
    const result = await flowctl(['--version'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout.trim()).toBe(pkg.version)
  })

  it('--help lists every command', async () => {
    const result = await flowctl(['--help'])
    expect(result.exitCode).toBe(0)
    for (const command of ['serve', 'run', 'tick', 'export-openapi', 'validate', 'test', 'init', 'history', 'users']) {
      expect(result.stdout).toContain(command)
    }
  })

  it('an unknown flag is a usage error (exit 2) without a stack trace', async () => {
    const result = await flowctl(['run', 'x', '--no-such-flag'])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain('--no-such-flag')
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it('a folder without flowctl.yaml is a clear error', async () => {
    const dir = await makeTempDir()
    const result = await flowctl(['validate', '--project', dir])
    expect(result.exitCode).not.toBe(0)
    expect(result.stderr).toContain('flowctl.yaml')
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })
})

describe('flowctl run on the example project', () => {
  let project: string
  let closedPort: number
  beforeAll(async () => {
    project = await copyFixture('example')
    // A port that was free a moment ago and is closed now: connecting to it fails.
    const server = createServer()
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    closedPort = (server.address() as { port: number }).port
    await new Promise((r) => server.close(r))
  })

  it('answers the End node status and body, and records a CLI run', async () => {
    const result = await flowctl(['run', 'create-order', '--project', project, '--body', '{"sku":"A-1","qty":2}', '--json'])
    expect(result.exitCode).toBe(0)
    const response = JSON.parse(result.stdout)
    expect(response.status).toBe(201)
    expect(response.body.ok).toBe(true)
    expect(typeof response.body.id).toBe('string')
    expect(response.runId).toEqual(expect.any(String))

    const history = await flowctl(['history', '--project', project, '--json'])
    expect(history.exitCode).toBe(0)
    const [record] = JSON.parse(history.stdout)
    expect(record).toEqual({
      id: response.runId,
      projectId: 'shop',
      flow: 'create-order',
      trigger: 'cli',
      method: 'CLI',
      startedAt: expect.any(String),
      durationMs: expect.any(Number),
      status: 'success',
      httpStatus: 201,
      ports: [{ nodeId: 'check', port: 'false' }],
      failedNodeId: null,
      error: null,
      scheduledFor: null,
      replayOf: null,
      resumedFrom: null,
    })
    expect(new Date(record.startedAt).toISOString()).toBe(record.startedAt)
  })

  it('takes the other branch of the If for a big order', async () => {
    const result = await flowctl(['run', 'create-order', '--project', project, '--body', '{"sku":"B","qty":50}', '--json'])
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 202, body: { ok: true, review: true } })
  })

  it('reports every invalid input as a 400 and exits 1, recording nothing', async () => {
    const before = JSON.parse((await flowctl(['history', '--project', project, '--json', '--limit', '1000'])).stdout).length
    const result = await flowctl(['run', 'create-order', '--project', project, '--body', '{"qty":0}', '--json'])
    expect(result.exitCode).toBe(1)
    const response = JSON.parse(result.stdout)
    expect(response.status).toBe(400)
    expect(response.body.ok).toBe(false)
    expect(response.body.errors).toContain('body/qty: must be >= 1')
    expect(response.body.errors.some((e: string) => e.startsWith('body/sku:'))).toBe(true)
    const after = JSON.parse((await flowctl(['history', '--project', project, '--json', '--limit', '1000'])).stdout).length
    expect(after).toBe(before)
  })

  it('answers 204 with no body (an End with status 204)', async () => {
    const result = await flowctl(['run', 'nightly-cleanup', '--project', project, '--json'])
    expect(result.exitCode).toBe(0)
    const response = JSON.parse(result.stdout)
    expect(response.status).toBe(204)
    expect(response.body).toBeNull()
  })

  it('coerces path and query values and follows the Switch', async () => {
    const result = await flowctl(['run', 'order-status', '--project', project, '--param', 'state=shipped', '--query', 'verbose=true', '--json'])
    expect(result.exitCode).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 200, body: { state: 'shipped', verbose: true } })
    const other = await flowctl(['run', 'order-status', '--project', project, '--param', 'state=lost', '--json'])
    expect(other.exitCode).toBe(1)
    expect(JSON.parse(other.stdout)).toMatchObject({ status: 404, body: { state: 'lost', message: 'No such state: lost' } })
  })

  it('fails with 500 and the failing node id when a node fails, and history shows why', async () => {
    const body = JSON.stringify({ url: `http://127.0.0.1:${closedPort}/` })
    const result = await flowctl(['run', 'fetch-status', '--project', project, '--body', body, '--json'])
    expect(result.exitCode).toBe(1)
    const response = JSON.parse(result.stdout)
    expect(response).toMatchObject({ status: 500, body: { ok: false, errors: ['node call failed'], nodeId: 'call', runId: response.runId } })

    const shown = await flowctl(['history', 'show', response.runId, '--project', project, '--json'])
    expect(shown.exitCode).toBe(0)
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: response.runId, status: 'error', httpStatus: 500, failedNodeId: 'call', error: expect.any(String) })

    const failures = await flowctl(['history', '--project', project, '--status', 'error', '--json'])
    expect(JSON.parse(failures.stdout).every((r: { status: string }) => r.status === 'error')).toBe(true)
  })

  it('reads --body @file', async () => {
    const file = join(project, 'order.json')
    await writeFile(file, '{"sku":"F","qty":1}')
    const result = await flowctl(['run', 'create-order', '--project', project, '--body', `@${file}`, '--json'])
    expect(JSON.parse(result.stdout).status).toBe(201)
  })

  it('prints a human response without --json', async () => {
    const result = await flowctl(['run', 'quote', '--project', project, '--body', '{"items":[{"sku":"X","price":2.5}]}'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toMatch(/^200 +run /)
    expect(result.stdout).toContain('"label": "Quote for X in EUR"')
    expect(result.stdout).not.toContain('\u001b[')
  })

  it('rejects an unknown flow and a body that is not JSON as usage errors', async () => {
    const unknown = await flowctl(['run', 'nope', '--project', project])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('flow "nope" not found')
    const badBody = await flowctl(['run', 'quote', '--project', project, '--body', '{oops'])
    expect(badBody.exitCode).toBe(2)
    expect(badBody.stderr).toContain('--body is not valid JSON')
  })

  it('shows secrets as *** in traces and never writes them to history', async () => {
    await writeFile(
      join(project, 'flows', 'leaky.yaml'),
      [
        'name: Leaky',
        'nodes:',
        '  - { id: start, type: start, name: Start, method: post, next: s }',
        '  - { id: s, type: set, name: S, values: { token: "${secrets.ORDERS_TOKEN}", note: "t=${secrets.ORDERS_TOKEN}" }, next: boom }',
        '  - { id: boom, type: http, name: Boom, url: "http://127.0.0.1:1/${secrets.ORDERS_TOKEN}" }',
        '',
      ].join('\n'),
    )
    const secret = 'dev-orders-token-change-me'
    const result = await flowctl(['run', 'leaky', '--project', project, '--trace', '--json'])
    expect(result.stdout).not.toContain(secret)
    expect(result.stderr).not.toContain(secret)
    const response = JSON.parse(result.stdout)
    expect(response.trace.steps.find((s: { nodeId: string }) => s.nodeId === 's').output).toEqual({ token: '***', note: 't=***' })
    const history = await flowctl(['history', '--project', project, '--flow', 'leaky', '--json'])
    expect(history.stdout).not.toContain(secret)
    const db = await readFile(join(project, '.flowctl', 'flowctl.db')).catch(() => Buffer.alloc(0))
    expect(db.includes(Buffer.from(secret))).toBe(false)
  })
})

describe('flowctl history show and run --replay (SPEC §14)', () => {
  let project: string
  let runId: string
  beforeAll(async () => {
    project = await copyFixture('example')
    const made = await flowctl(['run', 'create-order', '--project', project, '--body', '{"sku":"R-1","qty":4}', '--header', 'x-tenant=acme', '--json'])
    runId = JSON.parse(made.stdout).runId
  })

  it('history show prints the input and every step; --json includes them', async () => {
    const shown = await flowctl(['history', 'show', runId, '--project', project])
    expect(shown.exitCode).toBe(0)
    expect(shown.stdout).toContain('body     {"sku":"R-1","qty":4}')
    expect(shown.stdout).toContain('headers  {"x-tenant":"acme"}')
    expect(shown.stdout).toMatch(/steps \(4, [\d.]+ ms\)/)
    expect(shown.stdout).toMatch(/2\. Big Order \(if, check\) → false/)
    const json = JSON.parse((await flowctl(['history', 'show', runId, '--project', project, '--json'])).stdout)
    expect(json).toMatchObject({ id: runId, replayOf: null, input: { body: { sku: 'R-1', qty: 4 } }, trace: { runId, cut: false } })
    expect(json.trace.steps).toHaveLength(4)
  })

  it('run --replay runs the recorded input again and records replayOf', async () => {
    const replay = await flowctl(['run', '--replay', runId, '--project', project, '--json'])
    expect(replay.exitCode).toBe(0)
    const answer = JSON.parse(replay.stdout)
    expect(answer).toMatchObject({ status: 201, replayOf: runId, body: { ok: true } })
    const stored = JSON.parse((await flowctl(['history', 'show', answer.runId, '--project', project, '--json'])).stdout)
    expect(stored).toMatchObject({ replayOf: runId, method: 'CLI', input: { body: { sku: 'R-1', qty: 4 }, headers: { 'x-tenant': 'acme' } } })
    const human = await flowctl(['run', '--replay', runId, '--project', project])
    expect(human.stdout).toContain(`a replay of ${runId} (create-order)`)
  })

  it('clear errors: an unknown run, input flags with --replay, no flow at all', async () => {
    const unknown = await flowctl(['run', '--replay', 'nope', '--project', project])
    expect(unknown.exitCode).toBe(1)
    expect(unknown.stderr).toContain('no run with id "nope" in project shop')
    const mixed = await flowctl(['run', '--replay', runId, '--body', '{}', '--project', project])
    expect(mixed.exitCode).toBe(2)
    expect(mixed.stderr).toContain('--replay sends the recorded input')
    const none = await flowctl(['run', '--project', project])
    expect(none.exitCode).toBe(2)
    expect(none.stderr).toContain('which flow?')
    for (const result of [unknown, mixed, none]) expect(result.stderr).not.toMatch(/\s+at .+\(.+:\d+:\d+\)/)
  })

  it('a project with history.keep: none keeps no details, and says so', async () => {
    const bare = await copyFixture('example')
    const file = join(bare, 'flowctl.yaml')
    await writeFile(file, (await readFile(file, 'utf8')) + 'history: { keep: none }\n')
    const made = JSON.parse((await flowctl(['run', 'quote', '--project', bare, '--body', '{"items":[{"sku":"X","price":1}]}', '--json'])).stdout)
    const shown = await flowctl(['history', 'show', made.runId, '--project', bare])
    expect(shown.stdout).toContain('input and steps were not kept for this run (history.keep in flowctl.yaml)')
    const replay = await flowctl(['run', '--replay', made.runId, '--project', bare])
    expect(replay.exitCode).toBe(1)
    expect(replay.stderr).toContain('kept no input')
  })
})

describe('flowctl validate', () => {
  it('passes the example project', async () => {
    const result = await flowctl(['validate', '--project', join(ROOT, 'fixtures', 'example'), '--json'])
    expect(result.exitCode).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report.ok).toBe(true)
    expect(report.problems.filter((p: { message: string }) => !p.message.startsWith('warning:'))).toEqual([])
  })

  it('reports every problem with file:line:column and exits 1', async () => {
    const project = await copyFixture('example')
    await writeFile(
      join(project, 'flows', 'broken.yaml'),
      [
        'name: Broken',
        'nodes:',
        '  - id: start',
        '    type: start',
        '    name: Start',
        '    next: nowhere',
        '  - id: x',
        '    type: teleport',
        '    name: X',
        '',
      ].join('\n'),
    )
    const human = await flowctl(['validate', '--project', project])
    expect(human.exitCode).toBe(1)
    expect(human.stdout).toMatch(/flows\/broken\.yaml:6:\d+: .*nowhere/)
    expect(human.stdout).toMatch(/flows\/broken\.yaml:8:\d+: .*teleport/)
    const json = await flowctl(['validate', '--project', project, '--json'])
    const report = JSON.parse(json.stdout)
    expect(report.ok).toBe(false)
    for (const problem of report.problems) expect(Object.keys(problem).sort()).toEqual(['column', 'file', 'line', 'message'])
    expect(report.problems.length).toBeGreaterThanOrEqual(2)
  })
})

describe('the example project (npm start)', () => {
  it('loads without a single warning', async () => {
    const result = await flowctl(['validate', '--project', join(ROOT, 'fixtures', 'example')])
    expect(result.exitCode).toBe(0)
    expect(result.stderr).toBe('')
    expect(result.stdout).toContain('0 warnings')
  })
})

describe('flowctl init', () => {
  it('creates a project that runs at once', async () => {
    const parent = await makeTempDir()
    const dir = join(parent, 'my-shop')
    const created = await flowctl(['init', dir, '--json'])
    expect(created.exitCode).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({ ok: true, projectId: 'my-shop' })
    expect((await readdir(dir)).sort()).toEqual(['.env.example', '.gitignore', 'flowctl.yaml', 'flows', 'tests'])
    expect(await readdir(join(dir, 'tests'))).toEqual(['hello.test.yaml'])
    expect((await flowctl(['validate', '--project', dir])).exitCode).toBe(0)
    const run = await flowctl(['run', 'hello', '--project', dir, '--query', 'name=Ada', '--json'])
    expect(run.exitCode).toBe(0)
    expect(JSON.parse(run.stdout).body.message).toBe('Hello, Ada!')
    // The test written beside the flow passes as it is.
    const tested = await flowctl(['test', '--project', dir])
    expect(tested.stdout).toContain('2 passed, 0 failed')
    expect(tested.exitCode).toBe(0)
    const again = await flowctl(['init', dir])
    expect(again.exitCode).toBe(2)
    expect(again.stderr).toContain('already has a flowctl.yaml')
  })

  it('adds to an existing repository: merges .gitignore, keeps existing files, refuses only a second flowctl.yaml', async () => {
    const dir = await makeTempDir('flowctl-repo-')
    await writeFile(join(dir, '.gitignore'), 'node_modules/\n.env')
    await writeFile(join(dir, 'package.json'), '{"name":"app"}\n')
    const created = await flowctl(['init', '--project', dir, '--id', 'app', '--json'])
    expect(created.exitCode).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({ ok: true, merged: ['.gitignore'], kept: [] })
    // Existing lines stay, flowctl's missing line is added once, .env is not repeated.
    expect(await readFile(join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\n.env\n# flowctl\n.flowctl/\n')
    expect(await readFile(join(dir, 'package.json'), 'utf8')).toBe('{"name":"app"}\n')
    expect((await flowctl(['validate', '--project', dir])).exitCode).toBe(0)

    const again = await flowctl(['init', '--project', dir])
    expect(again.exitCode).toBe(2)
    expect(again.stderr).toContain('already has a flowctl.yaml; nothing was written')
    await rm(join(dir, 'flowctl.yaml'))
    const third = await flowctl(['init', '--project', dir, '--id', 'app', '--json'])
    expect(JSON.parse(third.stdout)).toMatchObject({
      files: ['flowctl.yaml'],
      merged: [],
      kept: ['.env.example', 'flows/hello.yaml', '.gitignore', 'tests/hello.test.yaml'],
    })
    expect(await readFile(join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\n.env\n# flowctl\n.flowctl/\n')
  })

  it('writes a $schema that resolves on this machine to the flow schema', async () => {
    const dir = join(await makeTempDir(), 'schema-check')
    expect((await flowctl(['init', dir])).exitCode).toBe(0)
    const flowFile = join(dir, 'flows', 'hello.yaml')
    const reference = /\$schema=(\S+)/.exec(await readFile(flowFile, 'utf8'))?.[1] ?? ''
    const schemaPath = reference.startsWith('file:') ? fileURLToPath(reference) : join(dir, 'flows', reference)
    expect(JSON.parse(await readFile(schemaPath, 'utf8'))).toEqual(JSON.parse(await readFile(join(ROOT, 'schema', 'flow.schema.json'), 'utf8')))
  })
})

describe('flowctl users', () => {
  it('adds a user, prints the token once, stores only a hash, lists and removes', async () => {
    const dir = await makeTempDir()
    const added = await flowctl(['users', 'add', 'ada', '--grant', 'shop=viewer', '--json'], { cwd: dir })
    expect(added.exitCode).toBe(0)
    const { name, token } = JSON.parse(added.stdout)
    expect(name).toBe('ada')
    expect(token.length).toBeGreaterThan(20)
    const file = await readFile(join(dir, '.flowctl', 'users.yaml'), 'utf8')
    expect(file).not.toContain(token)
    const listed = JSON.parse((await flowctl(['users', 'list', '--json'], { cwd: dir })).stdout)
    expect(listed).toEqual([{ name: 'ada', grants: { shop: 'viewer' }, createdAt: expect.any(String) }])
    expect((await flowctl(['users', 'grant', 'ada', 'shop=owner'], { cwd: dir })).exitCode).toBe(0)
    expect(JSON.parse((await flowctl(['users', 'list', '--json'], { cwd: dir })).stdout)[0].grants).toEqual({ shop: 'owner' })
    expect((await flowctl(['users', 'add', 'bob', '--grant', 'shop=admin'], { cwd: dir })).exitCode).toBe(2)
    expect((await flowctl(['users', 'remove', 'ada'], { cwd: dir })).exitCode).toBe(0)
    expect(JSON.parse((await flowctl(['users', 'list', '--json'], { cwd: dir })).stdout)).toEqual([])
  })

  it('loses no change when several users commands run at once (they take turns on a lock file)', async () => {
    const dir = await makeTempDir()
    const names = ['u1', 'u2', 'u3', 'u4', 'u5', 'u6']
    const results = await Promise.all(names.map((name) => flowctl(['users', 'add', name, '--grant', 'shop=viewer'], { cwd: dir })))
    expect(results.map((r) => r.exitCode)).toEqual(names.map(() => 0))
    const listed = JSON.parse((await flowctl(['users', 'list', '--json'], { cwd: dir })).stdout) as { name: string }[]
    expect(listed.map((u) => u.name).sort()).toEqual(names)
    expect(existsSync(join(dir, '.flowctl', 'users.yaml.lock'))).toBe(false)
  })
})

describe('flowctl export-openapi', () => {
  it('the committed document of the example project is up to date (CI fails when a flow changed alone)', async () => {
    const example = join(ROOT, 'fixtures', 'example')
    const result = await flowctl(['export-openapi', '--project', example, '--out', join(example, 'openapi.json'), '--check'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain('is up to date')
  })

  it('writes a document and --check fails once a flow changed', async () => {
    const project = await copyFixture('example')
    const out = join(project, 'openapi.json')
    expect((await flowctl(['export-openapi', '--project', project, '--out', out])).exitCode).toBe(0)
    const doc = JSON.parse(await readFile(out, 'utf8'))
    expect(doc.openapi).toBe('3.0.3')
    expect(doc.info).toEqual({ title: 'Shop API', version: '1.0.0' })
    expect(doc.paths['/api/run/shop/create-order'].post.operationId).toBe('createOrder')
    expect((await flowctl(['export-openapi', '--project', project, '--out', out, '--check'])).exitCode).toBe(0)

    const flowFile = join(project, 'flows', 'quote.yaml')
    await writeFile(flowFile, (await readFile(flowFile, 'utf8')).replace('Prices a basket', 'Prices any basket'))
    const check = await flowctl(['export-openapi', '--project', project, '--out', out, '--check'])
    expect(check.exitCode).toBe(1)
    expect(check.stderr).toContain('out of date')

    const yaml = await flowctl(['export-openapi', '--project', project, '--format', 'yaml'])
    expect(yaml.stdout).toMatch(/^openapi: 3\.0\.3/)
  })
})

describe('flowctl tick', () => {
  it('runs the schedules due at --at, once per minute', async () => {
    const project = await copyFixture('example')
    // 03:00 in Berlin is 02:00 UTC in winter.
    const first = await flowctl(['tick', '--project', project, '--at', '2026-11-21T02:00:20Z', '--json'])
    expect(first.exitCode).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, at: '2026-11-21T02:00:00.000Z', ran: 1, errors: 0 })
    const again = await flowctl(['tick', '--project', project, '--at', '2026-11-21T02:00:50Z', '--json'])
    expect(JSON.parse(again.stdout)).toMatchObject({ ran: 0 })
    const idle = await flowctl(['tick', '--project', project, '--at', '2026-11-21T02:01:00Z', '--json'])
    expect(JSON.parse(idle.stdout)).toMatchObject({ ran: 0, errors: 0 })
    const history = JSON.parse((await flowctl(['history', '--project', project, '--flow', 'nightly-cleanup', '--json'])).stdout)
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({ trigger: 'cron', method: 'CRON', status: 'success', httpStatus: 204 })
    expect((await flowctl(['tick', '--project', project, '--at', 'yesterday'])).exitCode).toBe(2)
  })
})
