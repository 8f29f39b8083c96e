// The flows API through a real `flowctl serve` (SPEC §24 "The file stays the source", "Who may
// edit"): reads and writes of a commented flow file, version conflicts, text that is not YAML,
// cross-site writes, foreign Hosts, slugs that try to leave the flows folder, node renames,
// creation and deletion by role, and the Run API answering the new behaviour after a write.
import { createHash } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { copyFile, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { diffArrays } from 'diff'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, eventually, flowctl, ROOT, startServe, type StartedServe } from '../helpers.js'

interface Answer {
  status: number
  body: any
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** A request with any headers (`fetch` cannot set Host), the body sent as JSON. */
function call(base: string, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const url = new URL(path, base)
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        // Sent as written: `..` and `%2F` must reach the server, not be resolved by a URL parser.
        path,
        headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => {
          let body: unknown = text
          try {
            body = JSON.parse(text)
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, body })
        })
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

function changedLines(before: string, after: string): { removed: string[]; added: string[] } {
  const removed: string[] = []
  const added: string[] = []
  for (const change of diffArrays(before.split('\n'), after.split('\n'))) {
    if (change.removed) removed.push(...change.value)
    if (change.added) added.push(...change.value)
  }
  return { removed, added }
}

describe('the flows API (real flowctl serve)', () => {
  let project: string
  let file: string
  let serve: StartedServe
  let base: string
  const tokens: Record<string, string> = {}

  beforeAll(async () => {
    project = await copyFixture('example')
    file = join(project, 'flows', 'edit-me.yaml')
    await copyFile(join(ROOT, 'test', 'fixtures', 'flow-edit', 'edit-me.yaml'), file)
    const usersFile = join(project, 'users.yaml')
    for (const [name, role] of [
      ['vic', 'viewer'],
      ['eddie', 'editor'],
      ['olive', 'owner'],
    ]) {
      const added = await flowctl(['users', 'add', name!, '--grant', `shop=${role}`, '--users', usersFile, '--json'])
      tokens[name!] = JSON.parse(added.stdout).token
    }
    serve = await startServe([project, '--users', usersFile])
    base = serve.base
  }, 60_000)

  afterAll(async () => {
    serve?.child.kill('SIGTERM')
    await serve?.child.catch(() => undefined)
    await cleanupTempDirs()
  })

  const runGreeting = async (): Promise<{ message?: string; n?: unknown; status?: number }> => {
    const response = await fetch(`${base}/api/run/shop/edit-me?who=ada`)
    return response.status === 200 ? ((await response.json()) as { message: string; n: unknown }) : { status: response.status }
  }

  it('GET answers { version, text, flow, problems } of the file', async () => {
    const text = await readFile(file, 'utf8')
    const { status, body } = await call(base, 'GET', '/api/flows/shop/edit-me')
    expect(status).toBe(200)
    expect(Object.keys(body).sort()).toEqual(['flow', 'problems', 'text', 'version'])
    expect(body).toMatchObject({ version: sha256(text), text, problems: [] })
    expect(body.flow.nodes.map((n: { id: string }) => n.id)).toEqual(['start', 'greet', 'done'])
    // Problems are what `flowctl validate` reports for the file, with line and column.
    const broken = await call(base, 'GET', '/api/flows/shop/create-order')
    expect(broken.body.problems).toEqual([])
  })

  it('PUT { flow } with one setting changed is a one-line diff of the file, logged, and the Run API answers the new behaviour', async () => {
    expect(await runGreeting()).toEqual({ message: 'hello ada', n: 1 })
    const before = await readFile(file, 'utf8')
    const { body: current } = await call(base, 'GET', '/api/flows/shop/edit-me')
    current.flow.nodes[1].values.n = 2
    const { status, body } = await call(base, 'PUT', '/api/flows/shop/edit-me', { body: { baseVersion: current.version, flow: current.flow } })
    expect(status).toBe(200)
    const after = await readFile(file, 'utf8')
    expect(body).toEqual({ version: sha256(after), text: after, problems: [] })
    expect(changedLines(before, after)).toEqual({
      removed: ['    values: { text: "hello {{start.who}}", n: 1 }   # n counts edits'],
      added: ['    values: { text: "hello {{start.who}}", n: 2 }   # n counts edits'],
    })
    await eventually(async () => (await runGreeting()).n === 2, 10_000)
    expect(serve.output()).toContain(`flows API: wrote shop flows/edit-me.yaml by this machine (loopback), version ${body.version}`)
  })

  it('PUT with a stale baseVersion is 409 with the file as it is, and leaves it untouched', async () => {
    const before = await readFile(file, 'utf8')
    const mtime = (await stat(file)).mtimeMs
    const { status, body } = await call(base, 'PUT', '/api/flows/shop/edit-me', {
      body: { baseVersion: sha256('an older text'), text: 'name: Edit Me\nnodes: []\n' },
    })
    expect(status).toBe(409)
    expect(body).toEqual({ ok: false, errors: ['the file changed on disk'], version: sha256(before), text: before })
    expect(await readFile(file, 'utf8')).toBe(before)
    expect((await stat(file)).mtimeMs).toBe(mtime)
  })

  it('PUT { text } that is not YAML is 422 and leaves the file untouched; YAML with problems is written with its problems', async () => {
    const before = await readFile(file, 'utf8')
    const version = sha256(before)
    const bad = await call(base, 'PUT', '/api/flows/shop/edit-me', { body: { baseVersion: version, text: 'name: Edit Me\nnodes: [ { id: start\n' } })
    expect(bad.status).toBe(422)
    expect(bad.body.ok).toBe(false)
    expect(bad.body.errors[0]).toMatch(/^flows\/edit-me\.yaml:\d+:\d+: YAML syntax error/)
    expect(await readFile(file, 'utf8')).toBe(before)

    const withProblem = before.replace('type: set', 'type: sett')
    const saved = await call(base, 'PUT', '/api/flows/shop/edit-me', { body: { baseVersion: version, text: withProblem } })
    expect(saved.status).toBe(200)
    expect(await readFile(file, 'utf8')).toBe(withProblem)
    expect(saved.body.problems).toEqual([
      expect.objectContaining({
        file: 'flows/edit-me.yaml',
        line: 18,
        column: 11,
        severity: 'error',
        message: expect.stringContaining('"sett" is not a node type'),
      }),
    ])
    // The served flow is the last good one (as for any broken save); putting the text back heals it.
    const restored = await call(base, 'PUT', '/api/flows/shop/edit-me', { body: { baseVersion: saved.body.version, text: before } })
    expect(restored).toMatchObject({ status: 200, body: { problems: [] } })
  })

  it('refuses cross-site writes (Origin of another site, Sec-Fetch-Site: cross-site) and takes same-origin ones', async () => {
    const before = await readFile(file, 'utf8')
    const put = (headers: Record<string, string>) =>
      call(base, 'PUT', '/api/flows/shop/edit-me', { headers, body: { baseVersion: sha256(before), text: before + '# x\n' } })
    expect(await put({ origin: 'http://evil.example' })).toMatchObject({ status: 403, body: { ok: false } })
    expect(await put({ origin: 'null' })).toMatchObject({ status: 403 })
    expect(await put({ 'sec-fetch-site': 'cross-site' })).toMatchObject({ status: 403 })
    expect(await put({ origin: base, 'sec-fetch-site': 'cross-site' })).toMatchObject({ status: 403 })
    const post = await call(base, 'POST', '/api/flows/shop', {
      headers: { origin: 'http://evil.example' },
      body: { slug: 'evil', flow: { name: 'Evil', nodes: [] } },
    })
    expect(post.status).toBe(403)
    const remove = await call(base, 'DELETE', '/api/flows/shop/edit-me', { headers: { 'sec-fetch-site': 'cross-site' } })
    expect(remove.status).toBe(403)
    expect(await readFile(file, 'utf8')).toBe(before)
    const same = await put({ origin: base, 'sec-fetch-site': 'same-origin' })
    expect(same.status).toBe(200)
    await call(base, 'PUT', '/api/flows/shop/edit-me', { body: { baseVersion: same.body.version, text: before } })
  })

  it('gives no source to a foreign Host (DNS rebinding) without a user token, nor to a viewer; an editor token reads and writes', async () => {
    const foreign = { host: `attacker.example:${serve.port}` }
    const anonymous = await call(base, 'GET', '/api/flows/shop/edit-me', { headers: foreign })
    expect(anonymous.status).toBe(401)
    expect(JSON.stringify(anonymous.body)).not.toContain('Greets')
    const viewer = await call(base, 'GET', '/api/flows/shop/edit-me', { headers: { ...foreign, authorization: `Bearer ${tokens.vic}` } })
    expect(viewer.status).toBe(403)
    expect(JSON.stringify(viewer.body)).not.toContain('Greets')
    const editor = await call(base, 'GET', '/api/flows/shop/edit-me', { headers: { ...foreign, authorization: `Bearer ${tokens.eddie}` } })
    expect(editor.status).toBe(200)
    const written = await call(base, 'PUT', '/api/flows/shop/edit-me', {
      headers: { ...foreign, authorization: `Bearer ${tokens.eddie}` },
      body: { baseVersion: editor.body.version, text: editor.body.text },
    })
    expect(written.status).toBe(200)
  })

  it('never reads or writes outside the flows folder, whatever the slug', async () => {
    const secret = join(project, 'flowctl.yaml')
    const settings = await readFile(secret, 'utf8')
    const listing = async () => [...(await readdir(project)), ...(await readdir(join(project, 'flows')))].sort()
    const files = await listing()
    const attacks = [
      '..',
      '..%2Fflowctl.yaml',
      '..%2f..%2fetc%2fpasswd',
      '%2e%2e%2fflowctl',
      '%2Fetc%2Fpasswd',
      'flowctl.yaml',
      'edit-me.yaml',
      'Edit-Me',
      'edit%2Dme%00',
      'flows%5C..%5Cflowctl',
      '.env',
    ]
    for (const slug of attacks) {
      const read = await call(base, 'GET', `/api/flows/shop/${slug}`)
      expect([400, 404], `GET ${slug}`).toContain(read.status)
      expect(JSON.stringify(read.body)).not.toContain('projectId')
      const write = await call(base, 'PUT', `/api/flows/shop/${slug}`, { body: { baseVersion: sha256(settings), text: 'name: Pwned\nnodes: []\n' } })
      expect([400, 404], `PUT ${slug}`).toContain(write.status)
      const remove = await call(base, 'DELETE', `/api/flows/shop/${slug}`)
      expect([400, 404], `DELETE ${slug}`).toContain(remove.status)
    }
    for (const slug of ['../evil', '/tmp/evil', 'a/b', '..', '', 'Evil', 'evil.yaml', 'x'.repeat(201)]) {
      const created = await call(base, 'POST', '/api/flows/shop', { body: { slug, flow: { name: 'Pwned', nodes: [] } } })
      expect(created.status, `POST ${slug}`).toBe(400)
    }
    // Dot segments in the path itself are resolved before routing: they reach no flows route.
    expect((await call(base, 'GET', '/api/flows/shop/../../flowctl.yaml')).status).toBe(404)
    expect(await readFile(secret, 'utf8')).toBe(settings)
    expect(await listing()).toEqual(files)
  })

  it('renaming a node rewrites its edges and references (found from the flow, or said with rename)', async () => {
    const { body: current } = await call(base, 'GET', '/api/flows/shop/edit-me')
    current.flow.nodes[1].id = 'salute'
    const renamed = await call(base, 'PUT', '/api/flows/shop/edit-me', { body: { baseVersion: current.version, flow: current.flow } })
    expect(renamed.status).toBe(200)
    expect(changedLines(current.text, renamed.body.text)).toEqual({
      removed: ['    next: greet', '  - id: greet', '    body: { message: "{{greet.text}}", n: "{{greet.n}}" }'],
      added: ['    next: salute', '  - id: salute', '    body: { message: "{{salute.text}}", n: "{{salute.n}}" }'],
    })
    expect(renamed.body.problems).toEqual([])
    // Said explicitly, together with another change: the flow may still carry the old id.
    const { body: saved } = await call(base, 'GET', '/api/flows/shop/edit-me')
    const explicit = await call(base, 'PUT', '/api/flows/shop/edit-me', {
      body: { baseVersion: saved.version, flow: saved.flow, rename: { from: 'salute', to: 'greet' } },
    })
    expect(explicit.status).toBe(200)
    expect(explicit.body.text).toBe(current.text)
    const unknown = await call(base, 'PUT', '/api/flows/shop/edit-me', {
      body: { baseVersion: explicit.body.version, flow: current.flow, rename: { from: 'nope', to: 'x' } },
    })
    expect(unknown).toMatchObject({ status: 400, body: { ok: false, errors: [expect.stringContaining('no node "nope"')] } })
    await eventually(async () => (await runGreeting()).message === 'hello ada', 10_000)
  })

  it('POST creates a flow file (409 when the slug is taken) that the Run API then serves; DELETE needs an owner', async () => {
    const flow = {
      name: 'Made Here',
      nodes: [
        { id: 'start', type: 'start', method: 'get', operationId: 'madeHere', next: 'done' },
        { id: 'done', type: 'end', body: { made: true } },
      ],
    }
    const created = await call(base, 'POST', '/api/flows/shop', { body: { slug: 'made-here', flow } })
    expect(created.status).toBe(201)
    const text = await readFile(join(project, 'flows', 'made-here.yaml'), 'utf8')
    expect(created.body).toEqual({ slug: 'made-here', version: sha256(text), text, problems: [] })
    await eventually(async () => (await fetch(`${base}/api/run/shop/made-here`)).status === 200, 10_000)
    expect(await (await fetch(`${base}/api/run/shop/made-here`)).json()).toEqual({ made: true })

    expect((await call(base, 'POST', '/api/flows/shop', { body: { slug: 'made-here', flow } })).status).toBe(409)
    // A slug taken by a flow whose file is named otherwise (create-order.yaml holds "Create Order").
    expect((await call(base, 'POST', '/api/flows/shop', { body: { slug: 'create-order', flow: { ...flow, name: 'Create Order' } } })).status).toBe(409)
    // The name must give the slug, or the flow would be served under another one.
    expect((await call(base, 'POST', '/api/flows/shop', { body: { slug: 'other-slug', flow } })).status).toBe(400)

    const foreign = { host: `attacker.example:${serve.port}` }
    const byEditor = await call(base, 'DELETE', '/api/flows/shop/made-here', { headers: { ...foreign, authorization: `Bearer ${tokens.eddie}` } })
    expect(byEditor).toMatchObject({ status: 403, body: { ok: false } })
    const byOwner = await call(base, 'DELETE', '/api/flows/shop/made-here', { headers: { ...foreign, authorization: `Bearer ${tokens.olive}` } })
    expect(byOwner).toMatchObject({ status: 200, body: { ok: true } })
    await expect(stat(join(project, 'flows', 'made-here.yaml'))).rejects.toThrow()
    await eventually(async () => (await fetch(`${base}/api/run/shop/made-here`)).status === 404, 10_000)
    expect(serve.output()).toContain('flows API: deleted shop flows/made-here.yaml by user olive')
    expect((await call(base, 'DELETE', '/api/flows/shop/made-here')).status).toBe(404)
  })

  it('the check route answers the problems a save would report and writes nothing', async () => {
    const before = await readFile(file, 'utf8')
    const checked = await call(base, 'POST', '/api/flows/shop/edit-me/check', { body: { text: before.replace('next: done', 'next: nowhere') } })
    expect(checked.status).toBe(200)
    expect(checked.body.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: 'flows/edit-me.yaml', line: 20, severity: 'error', message: expect.stringContaining('"nowhere"') }),
      ]),
    )
    expect(await readFile(file, 'utf8')).toBe(before)
  })

  it('answers 404 for an unknown project or flow, and 400 for a body that is not a write', async () => {
    expect((await call(base, 'GET', '/api/flows/nope/edit-me')).status).toBe(404)
    expect((await call(base, 'GET', '/api/flows/shop/no-such-flow')).body).toEqual({ ok: false, errors: ['flow not found'] })
    const version = sha256(await readFile(file, 'utf8'))
    for (const body of [
      {},
      { baseVersion: version },
      { baseVersion: version, text: 'a: 1', flow: {} },
      { baseVersion: version, flow: [] },
      { baseVersion: version, text: 3 },
    ]) {
      expect((await call(base, 'PUT', '/api/flows/shop/edit-me', { body })).status, JSON.stringify(body)).toBe(400)
    }
    expect((await call(base, 'PUT', '/api/flows/shop/edit-me', { body: 'not json' })).status).toBe(400)
    // Another method on a flows route: 405 with the methods it takes.
    const patch = await call(base, 'PATCH', '/api/flows/shop/edit-me', { body: {} })
    expect(patch.status).toBe(405)
  })

  it('two writes from one version at once: one is written, the other is a conflict', async () => {
    const { body: current } = await call(base, 'GET', '/api/flows/shop/edit-me')
    const write = (n: number) => {
      const flow = structuredClone(current.flow)
      flow.nodes[1].values.n = n
      return call(base, 'PUT', '/api/flows/shop/edit-me', { body: { baseVersion: current.version, flow } })
    }
    const answers = await Promise.all([write(10), write(11)])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    const winner = answers.find((a) => a.status === 200)!
    expect(await readFile(file, 'utf8')).toBe(winner.body.text)
    expect(answers.find((a) => a.status === 409)!.body.version).toBe(winner.body.version)
  })

  it('a file changed on disk by another editor makes the next write a conflict', async () => {
    const { body: current } = await call(base, 'GET', '/api/flows/shop/edit-me')
    await writeFile(file, current.text.replace('plain OK', 'changed by hand'))
    const put = await call(base, 'PUT', '/api/flows/shop/edit-me', { body: { baseVersion: current.version, flow: current.flow } })
    expect(put.status).toBe(409)
    expect(put.body.text).toContain('changed by hand')
  })
})
