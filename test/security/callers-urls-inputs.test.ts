// Issue 31 / SPEC §19, through the real `flowctl serve`: a url segment that values form together with
// the text beside them cannot become `.` or `..`, and a url written as one `{{= }}` expression must be
// an absolute http(s) URL (validate warns that nothing in it is encoded); a body field never fills a
// header or query input (Run API, `flowctl run --body`, `flowctl test`, replay); in update and delete a
// filter value that resolves to nothing fails the node instead of matching documents without the field;
// form and text bodies are stored in history and replayed, and a cut one is not replayed. The filter
// and stored-body parts run on SQLite and PostgreSQL.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, flowctl, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

pgSkipNotice('callers-urls-inputs (filters, stored bodies)')

const PROJECT_ID = 'callers'
const STORED_INPUT_BYTES = 2048

// The http flows: a file fetched by name and extension with a credential, and a url that is one expression.
const httpFlows = (upstream: string): Record<string, string> => ({
  'fetch-file.yaml': `name: Fetch File
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { name: { type: string }, ext: { type: string } } } }, next: call }
  - id: call
    type: http
    name: Call
    url: "${upstream}/files/{{start.name}}.{{start.ext}}"
    headers: { authorization: "Bearer \${secrets.UPSTREAM_TOKEN}" }
    next: done
  - { id: done, type: end, name: Done, body: { status: "{{call.status}}", path: "{{call.body.path}}" } }
`,
  'fetch-any.yaml': `name: Fetch Any
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { target: { type: string } } } }, next: call }
  - { id: call, type: http, name: Call, url: "{{= start.target }}", next: done }
  - { id: done, type: end, name: Done, body: { status: "{{call.status}}", path: "{{call.body.path}}" } }
`,
})

const FLOWS: Record<string, string> = {
  'whoami.yaml': `name: Whoami
nodes:
  - id: start
    type: start
    name: Start
    method: post
    inputs:
      headers: { type: object, properties: { x-user: { type: string } } }
      query: { type: object, properties: { role: { type: string } } }
      body: { type: object, properties: { note: { type: string } } }
    next: done
  - { id: done, type: end, name: Done, body: { user: "{{start.x-user}}", role: "{{start.role}}", note: "{{start.note}}" } }
`,
  'add-ticket.yaml': `name: Add Ticket
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, required: [title] } }, next: save }
  - { id: save, type: insert, name: Saved, collection: tickets, document: "{{start}}", next: done }
  - { id: done, type: end, name: Done, status: 201, body: { id: "{{saved.insertedId}}" } }
`,
  'list-tickets.yaml': `name: List Tickets
nodes:
  - { id: start, type: start, name: Start, method: get, next: list }
  - { id: list, type: find, name: Found, collection: tickets, filter: { closed: { $ne: true } }, sort: { title: 1 }, next: done }
  - { id: done, type: end, name: Done, body: { open: "{{found.documents}}" } }
`,
  'close-tickets.yaml': `name: Close Tickets
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { ownerId: {} } } }, next: close }
  - { id: close, type: update, name: Closed, collection: tickets, filter: { owner.id: "{{start.ownerId}}" }, set: { closed: true }, next: done }
  - { id: done, type: end, name: Done, body: { matched: "{{closed.matched}}" } }
`,
  'close-by-ids.yaml': `name: Close By Ids
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { a: {}, b: {} } } }, next: close }
  - { id: close, type: update, name: Closed, collection: tickets, filter: { owner.id: { $in: ["{{start.a}}", "{{start.b}}"] } }, set: { closed: true }, next: done }
  - { id: done, type: end, name: Done, body: { matched: "{{closed.matched}}" } }
`,
  'purge-tickets.yaml': `name: Purge Tickets
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { ownerId: {} } } }, next: purge }
  - { id: purge, type: delete, name: Purged, collection: tickets, filter: { owner.id: { $ne: "{{start.ownerId}}" }, title: { $exists: true } }, next: done }
  - { id: done, type: end, name: Done, body: { deleted: "{{purged.deleted}}" } }
`,
  'purge-unowned.yaml': `name: Purge Unowned
nodes:
  - { id: start, type: start, name: Start, method: post, next: purge }
  - { id: purge, type: delete, name: Purged, collection: tickets, filter: { owner: { $exists: false } }, next: done }
  - { id: done, type: end, name: Done, body: { deleted: "{{purged.deleted}}" } }
`,
  'sign-up.yaml': `name: Sign Up
nodes:
  - id: start
    type: start
    name: Start
    method: post
    accept: [json, form]
    inputs: { body: { type: object, required: [name, age], properties: { name: { type: string }, age: { type: integer }, tags: { type: array, items: { type: string } } } } }
    next: done
  - { id: done, type: end, name: Done, body: { name: "{{start.name}}", age: "{{start.age}}", tags: "{{start.tags}}" } }
`,
  'echo-text.yaml': `name: Echo Text
nodes:
  - { id: start, type: start, name: Start, method: post, accept: [text], inputs: { body: { type: string, maxLength: 10000 } }, next: done }
  - { id: done, type: end, name: Done, body: { text: "{{start.body}}" } }
`,
}

/** A project with every flow above, rate limit off, a small stored-input cap. */
async function writeProject(flows: Record<string, string>): Promise<string> {
  const dir = await makeTempDir('flowctl-callers-')
  await writeFile(
    join(dir, 'flowctl.yaml'),
    `projectId: ${PROJECT_ID}\nname: Callers\nlimits: { runsPerMinutePerIp: 0, storedInputBytes: ${STORED_INPUT_BYTES} }\n`,
  )
  await writeFile(join(dir, '.env'), 'UPSTREAM_TOKEN=up-secret-token\n')
  await mkdir(join(dir, 'flows'))
  for (const [file, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', file), text)
  return dir
}

interface Answer {
  status: number
  body: Record<string, unknown>
  runId: string | null
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text()
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, runId: response.headers.get('x-run-id') }
}

function client(serve: () => StartedServe) {
  const run = async (
    slug: string,
    init: { body?: unknown; text?: string; form?: string; headers?: Record<string, string>; query?: string; method?: string } = {},
  ) => {
    const headers: Record<string, string> = { ...init.headers }
    let body: string | undefined
    if (init.form !== undefined) [body, headers['content-type']] = [init.form, 'application/x-www-form-urlencoded']
    else if (init.text !== undefined) [body, headers['content-type']] = [init.text, 'text/plain']
    else if (init.body !== undefined) [body, headers['content-type']] = [JSON.stringify(init.body), 'application/json']
    const response = await fetch(`${serve().base}/api/run/${PROJECT_ID}/${slug}${init.query ?? ''}`, { method: init.method ?? 'POST', headers, body })
    return answerOf(response)
  }
  const record = async (runId: string) => {
    const response = await fetch(`${serve().base}/api/runs/${PROJECT_ID}/${runId}`)
    expect(response.status).toBe(200)
    return (await response.json()) as { status: string; error: string | null; failedNodeId: string | null; input: Record<string, unknown> | null }
  }
  const replay = async (runId: string) => answerOf(await fetch(`${serve().base}/api/replay/${PROJECT_ID}/${runId}`, { method: 'POST' }))
  return { run, record, replay }
}

describe('URLs and inputs through the real serve', () => {
  let upstream: Server
  let upstreamUrl: string
  // Every path the upstream was called with, and the credential it came with.
  const calls: { path: string; authorization: string | undefined }[] = []
  let project: string
  let serve: StartedServe
  const { run, record, replay } = client(() => serve)

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      calls.push({ path: request.url ?? '', authorization: request.headers.authorization })
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: request.url }))
    })
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
    project = await writeProject({ ...FLOWS, ...httpFlows(upstreamUrl) })
    serve = await startServe([project, '--host', '127.0.0.1', '--quiet', '--no-watch'])
  })

  afterAll(async () => {
    serve?.child.kill('SIGTERM')
    await serve?.child.catch(() => undefined)
    upstream?.closeAllConnections()
    await new Promise<void>((resolve) => upstream?.close(() => resolve()))
    await cleanupTempDirs()
  })

  it('calls the file a name and extension form, with its credential', async () => {
    calls.length = 0
    const answer = await run('fetch-file', { body: { name: 'report', ext: 'pdf' } })
    expect(answer).toMatchObject({ status: 200, body: { status: 200, path: '/files/report.pdf' } })
    expect(calls).toEqual([{ path: '/files/report.pdf', authorization: 'Bearer up-secret-token' }])
  })

  // Each finished segment is `..` or `.`; the URL parser would have resolved it to the folder above.
  const dotCases: [string, { name: string; ext: string }, string][] = [
    ['name "." and an empty ext make ".."', { name: '.', ext: '' }, '..'],
    ['an empty name and ext "." make ".."', { name: '', ext: '.' }, '..'],
    ['percent-encoded dots written as text stay encoded values', { name: '%2e', ext: '' }, ''],
  ]
  for (const [title, body, segment] of dotCases) {
    it(`${segment ? 'refuses' : 'allows'}: ${title}`, async () => {
      calls.length = 0
      const answer = await run('fetch-file', { body })
      if (!segment) {
        // `%2e` is a value, so it is encoded (`%252e`): never read as a dot.
        expect(answer.status).toBe(200)
        expect(calls.map((call) => call.path)).toEqual(['/files/%252e.'])
        return
      }
      expect(answer.status).toBe(500)
      expect(answer.body).toMatchObject({ ok: false, errors: ['node call failed'], nodeId: 'call' })
      // The folder above (`/`) was never called, with or without the credential.
      expect(calls).toEqual([])
      const stored = await record(answer.runId ?? String(answer.body.runId))
      expect(stored.status).toBe('error')
      expect(stored.failedNodeId).toBe('call')
      expect(stored.error).toContain(`has the segment "${segment}" in its url path, formed with a {{ }} value, which is not allowed`)
    })
  }

  it('a url that is one {{= }} expression must be an absolute http(s) URL', async () => {
    calls.length = 0
    const ok = await run('fetch-any', { body: { target: `${upstreamUrl}/a/../b?x=1` } })
    expect(ok).toMatchObject({ status: 200, body: { status: 200, path: '/b?x=1' } })
    for (const [target, reason] of [
      ['/files/secret', 'has an invalid URL "/files/secret"'],
      ['file:///etc/passwd', 'only http and https URLs can be called'],
    ] as const) {
      const refused = await run('fetch-any', { body: { target } })
      expect(refused.status).toBe(500)
      const stored = await record(String(refused.body.runId))
      expect(stored).toMatchObject({ status: 'error', failedNodeId: 'call' })
      expect(stored.error).toContain(reason)
    }
    expect(calls.map((call) => call.path)).toEqual(['/b?x=1'])
  })

  it('flowctl validate warns that nothing in a one-expression url is encoded', async () => {
    const result = await flowctl(['validate', '--json'], { cwd: project })
    const report = JSON.parse(result.stdout) as { ok: boolean; problems: { file: string; line: number; message: string }[] }
    expect(report.ok).toBe(true)
    const warnings = report.problems.filter((problem) => problem.message.includes('nothing in it is encoded'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ file: expect.stringContaining('fetch-any.yaml'), line: 4 })
    expect(warnings[0]!.message).toMatch(/^warning: /)
  })

  it('a body field never fills a header or query input', async () => {
    const spoofed = await run('whoami', { body: { 'x-user': 'admin', role: 'root', note: 'hi' } })
    expect(spoofed).toMatchObject({ status: 200, body: { user: null, role: null, note: 'hi' } })
    const honest = await run('whoami', { body: { 'x-user': 'admin', role: 'root' }, headers: { 'x-user': 'bob' }, query: '?role=reader' })
    expect(honest).toMatchObject({ status: 200, body: { user: 'bob', role: 'reader' } })
    // Replay sends the stored body again: its fields still stay out of the header and query inputs.
    const stored = await record(String(spoofed.runId))
    expect(stored.input).toMatchObject({ body: { 'x-user': 'admin', role: 'root' }, headers: {}, query: {} })
    const replayed = await replay(String(spoofed.runId))
    expect(replayed).toMatchObject({ status: 200, body: { response: { status: 200, body: { user: null, role: null, note: 'hi' } } } })
  })

  it('flowctl run --body: a body field never fills a header or query input', async () => {
    const result = await flowctl(['run', 'whoami', '--body', JSON.stringify({ 'x-user': 'admin', role: 'root' }), '--json'], { cwd: project })
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 200, body: { user: null, role: null } })
    const honest = await flowctl(['run', 'whoami', '--body', '{"x-user":"admin"}', '--header', 'x-user=bob', '--json'], { cwd: project })
    expect(JSON.parse(honest.stdout)).toMatchObject({ status: 200, body: { user: 'bob' } })
  })

  it("flowctl test: a case's input.body never fills a header or query input", async () => {
    await mkdir(join(project, 'tests'), { recursive: true })
    await writeFile(
      join(project, 'tests', 'whoami.test.yaml'),
      `flow: whoami
cases:
  - name: body fields stay body fields
    input: { body: { x-user: admin, role: root } }
    expect: { status: 200, body: { user: null, role: null, note: null } }
  - name: headers and query fill their inputs
    input: { body: { x-user: admin }, headers: { x-user: bob }, query: { role: reader } }
    expect: { status: 200, body: { user: bob, role: reader, note: null } }
`,
    )
    const result = await flowctl(['test', '--json'], { cwd: project })
    expect(result.exitCode, result.stdout + result.stderr).toBe(0)
  })
})

const stores: [string, boolean][] = [
  ['SQLite', true],
  ['PostgreSQL', Boolean(PG_URL)],
]

// The PostgreSQL run is skipped without FLOWCTL_TEST_DATABASE_URL (notice printed above).
describe.each(stores)('filters with missing values and stored form/text bodies on %s', (storeName, enabled) => {
  let serve: StartedServe
  let db: { url: string; drop: () => Promise<void> } | undefined
  const { run, record, replay } = client(() => serve)

  beforeAll(async () => {
    if (!enabled) return
    const env: Record<string, string> = {}
    if (storeName === 'PostgreSQL') {
      db = await createTestDatabase()
      env.FLOWCTL_DATABASE_URL = db.url
    }
    const project = await writeProject(FLOWS)
    serve = await startServe([project, '--host', '127.0.0.1', '--quiet', '--no-watch'], { env })
  })

  afterAll(async () => {
    if (!enabled) return
    serve?.child.kill('SIGTERM')
    await serve?.child.catch(() => undefined)
    await db?.drop()
    await cleanupTempDirs()
  })

  const openTitles = async () => {
    const answer = await run('list-tickets', { method: 'GET' })
    expect(answer.status).toBe(200)
    return (answer.body.open as { title: string }[]).map((ticket) => ticket.title)
  }

  const expectFailed = async (answer: Answer, nodeId: string, reason: string) => {
    expect(answer.status).toBe(500)
    expect(answer.body).toMatchObject({ ok: false, errors: [`node ${nodeId} failed`], nodeId })
    const stored = await record(String(answer.body.runId))
    expect(stored).toMatchObject({ status: 'error', failedNodeId: nodeId })
    expect(stored.error).toContain(reason)
  }

  it.skipIf(!enabled)('update and delete fail on a filter value that is missing, and match nothing without the field', async () => {
    for (const ticket of [{ title: 'owned', owner: { id: 'u1' } }, { title: 'unowned' }, { title: 'owner-without-id', owner: { name: 'x' } }]) {
      expect((await run('add-ticket', { body: ticket })).status).toBe(201)
    }
    expect(await openTitles()).toEqual(['owned', 'owner-without-id', 'unowned'])

    // Missing and null both fail; before, they closed every ticket whose owner has no id.
    await expectFailed(await run('close-tickets', { body: {} }), 'close', 'filter value for owner.id is missing')
    await expectFailed(await run('close-tickets', { body: { ownerId: null } }), 'close', 'filter value for owner.id is missing')
    // One missing item of a written $in list fails too.
    await expectFailed(await run('close-by-ids', { body: { a: 'u1' } }), 'close', 'filter value for owner.id is missing')
    // $ne with a missing value would have deleted every ticket that has an owner id.
    await expectFailed(await run('purge-tickets', { body: {} }), 'purge', 'filter value for owner.id is missing')
    expect(await openTitles()).toEqual(['owned', 'owner-without-id', 'unowned'])

    // Present values work as before.
    expect(await run('close-tickets', { body: { ownerId: 'u1' } })).toMatchObject({ status: 200, body: { matched: 1 } })
    expect(await openTitles()).toEqual(['owner-without-id', 'unowned'])
    expect(await run('close-by-ids', { body: { a: 'nobody', b: 'u1' } })).toMatchObject({ status: 200, body: { matched: 1 } })
    // `$exists: false`, written on purpose, still picks the documents without the field.
    expect(await run('purge-unowned', {})).toMatchObject({ status: 200, body: { deleted: 1 } })
    expect(await openTitles()).toEqual(['owner-without-id'])
  })

  it.skipIf(!enabled)('a form body is stored with its media type and replayed through form validation', async () => {
    const answer = await run('sign-up', { form: 'name=Zo%C3%AB&age=42&tags=a&tags=b' })
    expect(answer).toMatchObject({ status: 200, body: { name: 'Zoë', age: 42, tags: ['a', 'b'] } })
    const stored = await record(String(answer.runId))
    expect(stored.input).toMatchObject({ body: { name: 'Zoë', age: 42, tags: ['a', 'b'] }, bodyType: 'form' })
    const replayed = await replay(String(answer.runId))
    expect(replayed).toMatchObject({
      status: 200,
      body: { replayOf: answer.runId, response: { status: 200, body: { name: 'Zoë', age: 42, tags: ['a', 'b'] } } },
    })
    const replayRecord = await record(String(replayed.body.runId))
    expect(replayRecord.input).toEqual(stored.input)
    // A JSON body keeps the stored shape it always had (no bodyType).
    const json = await run('sign-up', { body: { name: 'Ann', age: 7 } })
    expect((await record(String(json.runId))).input).toEqual({ body: { name: 'Ann', age: 7 }, path: {}, query: {}, headers: {} })
  })

  it.skipIf(!enabled)('a text body is stored and replayed as text', async () => {
    const text = 'line one\nline <two> & "three"'
    const answer = await run('echo-text', { text })
    expect(answer).toMatchObject({ status: 200, body: { text } })
    const stored = await record(String(answer.runId))
    expect(stored.input).toMatchObject({ body: text, bodyType: 'text' })
    const replayed = await replay(String(answer.runId))
    expect(replayed).toMatchObject({ status: 200, body: { response: { status: 200, body: { text } } } })
  })

  it.skipIf(!enabled)('form and text bodies past limits.storedInputBytes are cut with the marker and not replayed', async () => {
    const long = 'x'.repeat(STORED_INPUT_BYTES * 2)
    for (const [slug, init] of [
      ['echo-text', { text: long }],
      ['sign-up', { form: `name=${long}&age=1` }],
    ] as const) {
      const answer = await run(slug, init)
      expect(answer.status).toBe(200)
      const stored = await record(String(answer.runId))
      expect(stored.input).toMatchObject({ cut: true, bodyType: slug === 'echo-text' ? 'text' : 'form' })
      expect(String(stored.input?.body)).toContain("[cut: this run's input passed limits.storedInputBytes")
      const replayed = await replay(String(answer.runId))
      expect(replayed.status).toBe(409)
      expect(replayed.body).toMatchObject({ ok: false })
    }
  })
})
