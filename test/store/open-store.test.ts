import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, type Project } from '../../src/model/project.js'
import Database from 'better-sqlite3'
import { documentIndexName } from '../../src/store/documents.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { makeRun } from './contract.js'

const dir = await mkdtemp(join(tmpdir(), 'flowctl-open-store-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

function project(database: string, secrets: Record<string, string> = {}): Project {
  return {
    dir,
    settings: {
      projectId: 'shop',
      name: 'Shop',
      flows: 'flows',
      timezone: 'UTC',
      database,
      secrets: '.env',
      limits: DEFAULT_LIMITS,
      history: { keep: 'all' },
      notify: { channels: {}, alerts: [], digests: [] },
      indexes: {},
      trace: 'loopback',
    },
    flows: new Map(),
    secrets: new Map(Object.entries(secrets)),
    problems: [],
  }
}

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  const outcome = await promise.then(
    () => null,
    (error: unknown) => error as Error & { code?: string },
  )
  if (!outcome) throw new Error('expected openProjectStore to fail')
  return outcome
}

describe('openProjectStore', () => {
  it('opens the embedded database under .flowctl/', async () => {
    const store = await openProjectStore(project('embedded'), { env: {} })
    expect(store.kind).toBe('sqlite')
    const run = makeRun('shop')
    await store.history.recordRun(run, 100)
    await store.close()
    expect(existsSync(join(dir, '.flowctl', 'flowctl.db'))).toBe(true)
    const again = await openProjectStore(project('embedded'), { env: {} })
    expect(await again.history.getRun('shop', run.id)).toStrictEqual({ ...run, input: null, trace: null })
    await again.close()
  })

  it('creates the document indexes flowctl.yaml declares, idempotently', async () => {
    const withIndexes = {
      ...project('embedded'),
      settings: { ...project('embedded').settings, indexes: { orders: ['status', 'customer.id'], users: ['status'] } },
    }
    await (await openProjectStore(withIndexes, { env: {} })).close()
    await (await openProjectStore(withIndexes, { env: {} })).close()
    const raw = new Database(join(dir, '.flowctl', 'flowctl.db'), { readonly: true })
    const names = (
      raw.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'documents_by_%' ORDER BY name").all() as { name: string }[]
    ).map((r) => r.name)
    raw.close()
    expect(names).toEqual(['documents_by_collection', documentIndexName(['customer', 'id']), documentIndexName(['status'])].sort())
  })

  it('lets FLOWCTL_DATABASE_URL override the setting, both ways', async () => {
    const embedded = await openProjectStore(project('postgres://u:sekret@127.0.0.1:1/x'), { env: { FLOWCTL_DATABASE_URL: 'embedded' } })
    expect(embedded.kind).toBe('sqlite')
    await embedded.close()
    const error = await failure(openProjectStore(project('embedded'), { env: { FLOWCTL_DATABASE_URL: 'postgres://u:sekret@127.0.0.1:1/x' } }))
    expect(error.code).toBe('STORE_UNAVAILABLE')
    expect(error.message).toBe('cannot reach PostgreSQL at 127.0.0.1:1 (ECONNREFUSED)')
  })

  it('names an unset secret of the database URL', async () => {
    const error = await failure(openProjectStore(project('postgres://app:${secrets.DB_PASSWORD}@db:5432/app'), { env: {} }))
    expect(error.code).toBe('STORE_UNAVAILABLE')
    expect(error.message).toBe('the database URL uses secret DB_PASSWORD, which is not set')
  })

  it('resolves secrets in the URL and never shows the password', async () => {
    const setting = 'postgresql://app:${secrets.DB_PASSWORD}@127.0.0.1:1/app'
    const error = await failure(openProjectStore(project(setting, { DB_PASSWORD: 'hunter2-secret' }), { env: {} }))
    // Reaching the connect step (not the unset-secret error) shows the secret was resolved.
    expect(error.code).toBe('STORE_UNAVAILABLE')
    expect(error.message).toBe('cannot reach PostgreSQL at 127.0.0.1:1 (ECONNREFUSED)')
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain('hunter2')
  })

  it('rejects other database settings as a usage error without echoing them', async () => {
    const error = await failure(openProjectStore(project('mysql://root:sekret@db/app'), { env: {} }))
    expect(error.code).toBe('USAGE')
    expect(error.message).not.toContain('sekret')
    const fromEnv = await failure(openProjectStore(project('embedded'), { env: { FLOWCTL_DATABASE_URL: 'sqlite:x' } }))
    expect(fromEnv.code).toBe('USAGE')
    expect(fromEnv.message).toContain('FLOWCTL_DATABASE_URL')
  })
})
