// End-to-end (SPEC §10): the real `flowctl serve` on the example project's ticket flows, on SQLite and
// on PostgreSQL: create, get (and 404), list with a filter and paging, update, delete; hostile values
// sent by a caller stay data; `flowctl documents` reads the same store.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, startServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

pgSkipNotice('documents through serve')

// A flow whose filter takes a caller's value of any type: the hostile cases go through it.
const SEARCH_FLOW = `name: Search Tickets
nodes:
  - id: search
    type: start
    name: Start
    method: post
    inputs: { body: { type: object, properties: { status: {}, title: {} } } }
    next: list
  - id: list
    type: find
    name: Found
    collection: tickets
    filter: { status: "{{start.status}}" }
    next: done
  - id: done
    type: end
    name: Done
    body: { titles: "{{found.documents}}", count: "{{found.count}}" }
`

const stores: [string, boolean][] = [
  ['SQLite', true],
  ['PostgreSQL', Boolean(PG_URL)],
]

// The PostgreSQL run is skipped without FLOWCTL_TEST_DATABASE_URL (notice printed above).
describe.each(stores)('documents through the real serve on %s', (storeName, enabled) => {
  let project: string
  let base: string
  let server: ResultPromise
  let db: { url: string; drop: () => Promise<void> } | undefined
  const env: Record<string, string> = {}

  beforeAll(async () => {
    if (!enabled) return
    if (storeName === 'PostgreSQL') {
      db = await createTestDatabase()
      env.FLOWCTL_DATABASE_URL = db.url
    }
    project = await copyFixture('example')
    await writeFile(join(project, 'flows', 'search-tickets.yaml'), SEARCH_FLOW)
    const started = await startServe([project, '--host', '127.0.0.1', '--quiet', '--no-watch'], { env })
    server = started.child
    base = started.base
  })

  afterAll(async () => {
    if (!enabled) return
    server.kill('SIGTERM')
    await server.catch(() => {})
    await db?.drop()
    await cleanupTempDirs()
  })

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}/api/run/shop/${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  it.skipIf(!enabled)('creates, reads, lists with a filter and paging, updates and deletes', async () => {
    const ids: string[] = []
    for (const [title, priority] of [
      ['Printer on fire', 'high'],
      ['Coffee machine', undefined],
      ['Door squeaks', 'low'],
    ] as const) {
      const created = await call('POST', 'create-ticket', { title, ...(priority ? { priority } : {}) })
      expect(created.status).toBe(201)
      ids.push(String(created.body.id))
    }
    expect(await call('GET', `get-ticket/${ids[0]}`)).toEqual({
      status: 200,
      body: { _id: ids[0], title: 'Printer on fire', priority: 'high', status: 'open' },
    })
    expect(await call('GET', 'get-ticket/000000000000000000000000')).toEqual({ status: 404, body: { error: 'no ticket with id 000000000000000000000000' } })

    const page = await call('GET', 'list-tickets?limit=2')
    expect(page.status).toBe(200)
    expect((page.body.tickets as { _id: string }[]).map((t) => t._id)).toEqual([ids[2], ids[1]]) // newest first
    expect(page.body.count).toBe(3)
    const next = await call('GET', 'list-tickets?limit=2&skip=2')
    expect((next.body.tickets as { _id: string }[]).map((t) => t._id)).toEqual([ids[0]])

    expect(await call('PATCH', `update-ticket/${ids[1]}`, { status: 'closed' })).toEqual({ status: 200, body: { matched: 1, modified: 1 } })
    expect(await call('PATCH', `update-ticket/${ids[1]}`, { status: 'closed' })).toEqual({ status: 200, body: { matched: 1, modified: 0 } })
    expect(await call('PATCH', 'update-ticket/nope', { status: 'closed' })).toEqual({ status: 404, body: { error: 'no ticket with id nope' } })
    const closed = await call('GET', 'list-tickets?status=closed')
    expect(closed.body).toEqual({ tickets: [{ _id: ids[1], title: 'Coffee machine', priority: 'normal', status: 'closed' }], count: 1 })
    expect((await call('GET', 'list-tickets')).body.count).toBe(2)

    expect(await call('DELETE', `delete-ticket/${ids[2]}`)).toEqual({ status: 200, body: { deleted: 1 } })
    expect((await call('DELETE', `delete-ticket/${ids[2]}`)).status).toBe(404)
    expect((await call('GET', `get-ticket/${ids[2]}`)).status).toBe(404)

    // The CLI reads the same store: collections with counts, then documents newest first.
    const collections = await flowctl(['documents', '--project', project, '--json'], { env })
    expect(JSON.parse(collections.stdout)).toEqual([{ collection: 'tickets', count: 2 }])
    const listed = await flowctl(['documents', 'tickets', '--project', project, '--filter', '{"status":{"$in":["open","closed"]}}', '--json'], { env })
    expect(JSON.parse(listed.stdout)).toMatchObject({ collection: 'tickets', count: 2, documents: [{ _id: ids[1] }, { _id: ids[0] }] })
  })

  it.skipIf(!enabled)('keeps values a caller sends as data: operators, SQL and $where cannot widen the query', async () => {
    await call('POST', 'create-ticket', { title: 'plain' })
    const hostile: [unknown, number][] = [
      [{ $ne: null }, 0],
      ["' OR 1=1 --", 0],
      [{ $where: 'function () { return true }' }, 0],
      [{ $gt: '' }, 0],
      ['open', 2],
    ]
    for (const [status, count] of hostile) {
      const result = await call('POST', 'search-tickets', { status })
      expect({ status, code: result.status, count: result.body.count }).toEqual({ status, code: 200, count })
    }
  })

  it.skipIf(!enabled)('flowctl documents: a bad filter or sort is a usage error (exit 2) with a clear message', async () => {
    const badJson = await flowctl(['documents', 'tickets', '--project', project, '--filter', '{status:'], { env })
    expect(badJson.exitCode).toBe(2)
    expect(badJson.stderr).toContain('--filter is not valid JSON')
    const badOperator = await flowctl(['documents', 'tickets', '--project', project, '--filter', '{"status":{"$where":"1"}}'], { env })
    expect(badOperator.exitCode).toBe(2)
    expect(badOperator.stderr).toContain('--filter at status.$where: "$where" is not a filter operator')
    const badSort = await flowctl(['documents', 'tickets', '--project', project, '--sort', '{"title":"up"}'], { env })
    expect(badSort.exitCode).toBe(2)
    expect(badSort.stderr).toContain('sort direction of "title" must be 1 (ascending) or -1 (descending)')
    expect(badSort.stderr).not.toContain('    at ')
  })
})
