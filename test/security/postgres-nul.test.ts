// Issue 20: NUL characters and lone surrogates. Run inputs holding them are a 400 at validation (on
// every store, so SQLite and PostgreSQL behave alike); text made elsewhere (a failure reason, an
// upstream answer put in a document) is stored escaped on PostgreSQL: never a lost record.
// The PostgreSQL part needs FLOWCTL_TEST_DATABASE_URL; without it, it skips with a notice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { openPostgresStore } from '../../src/store/postgres/index.js'
import type { Store } from '../../src/model/store.js'
import { jsonPost, startTestServer, type TestServer } from '../http/setup.js'
import { makeRun } from '../store/contract.js'
import { makeTempDir } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

pgSkipNotice('security: NUL characters')

const FLOW = `name: Save Note
nodes:
  - id: start
    type: start
    name: Start
    method: post
    inputs: { body: { type: object, required: [name], properties: { name: { type: string } } } }
    next: save
  - { id: save, type: insert, name: Save, collection: notes, document: { name: "{{start.name}}" }, next: done }
  - { id: done, type: end, name: Done, status: 201, body: { id: "{{save.id}}" } }
`

interface Backend {
  name: string
  database: () => Promise<{ setting: string; openStore: () => Promise<Store>; drop: () => Promise<void> }>
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    database: async () => {
      const dir = await makeTempDir('flowctl-nul-')
      return { setting: 'embedded', openStore: () => openSqliteStore(`${dir}/store.db`), drop: async () => {} }
    },
  },
]
if (PG_URL) {
  backends.push({
    name: 'postgres',
    database: async () => {
      const { url, drop } = await createTestDatabase()
      return { setting: `"${url}"`, openStore: () => openPostgresStore(url), drop }
    },
  })
}

describe.each(backends)('NUL and lone surrogates on $name', (backend) => {
  let s: TestServer
  let store: Store
  let drop: () => Promise<void>
  beforeAll(async () => {
    const database = await backend.database()
    drop = database.drop
    s = await startTestServer({ flows: { 'save-note.yaml': FLOW }, settings: [['database: embedded', `database: ${database.setting}`]] })
    store = await database.openStore()
  })
  afterAll(async () => {
    await store?.close()
    await s?.close()
    await drop?.()
  })

  it.each([
    ['a NUL character', '{"name":"a\\u0000b"}', 'body/name: contains a NUL character'],
    ['a lone surrogate', '{"name":"x\\ud800"}', 'body/name: contains a lone UTF-16 surrogate'],
    ['a NUL in a key', '{"name":"ok","x\\u0000":1}', 'body/x\\u0000: name contains a NUL character'],
  ])('answers 400 to an input with %s, and stores nothing', async (_, text, error) => {
    const response = await s.request('/api/run/shop/save-note', jsonPost(text))
    expect(response.status).toBe(400)
    const body = await response.json()
    expect(body.ok).toBe(false)
    expect(body.errors.join('\n')).toContain(error)
    const collections = await s.workspace.get('shop')!.store!.documents.listCollections('shop')
    expect(collections.find((c) => c.collection === 'notes')?.count ?? 0).toBe(0)
  })

  it('still stores ordinary text (surrogate pairs included)', async () => {
    const response = await s.request('/api/run/shop/save-note', jsonPost({ name: 'emoji 😀' }))
    expect(response.status).toBe(201)
  })

  it('records a run whose failure reason holds a NUL character', async () => {
    const run = makeRun('nul', { status: 'error', httpStatus: 500, failedNodeId: 'call', error: 'upstream said a\u0000b' })
    await store.history.recordRun(run, 100)
    const stored = await store.history.getRun('nul', run.id)
    expect(['upstream said a\u0000b', 'upstream said a\\u0000b']).toContain(stored?.error)
  })

  it('stores a document holding a NUL or a lone surrogate made inside a flow', async () => {
    const id = await store.documents.insert('nul', 'notes', { text: 'a\u0000b', odd: 'x\ud800' })
    const document = (await store.documents.get('nul', 'notes', id)) as Record<string, string>
    expect(['a\u0000b', 'a\\u0000b']).toContain(document.text)
    expect(document.odd.startsWith('x')).toBe(true)
  })
})
