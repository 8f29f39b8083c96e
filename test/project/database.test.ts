// resolveDatabase: the one place a project's `database` (with its secrets, FLOWCTL_DATABASE_URL and
// the embedded path) becomes the target a store opens; the store itself never sees the project.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, type Project } from '../../src/model/project.js'
import { resolveDatabase } from '../../src/project/database.js'

const DIR = '/srv/shop project'

function project(database: string, secrets: Record<string, string> = {}, databaseSchema?: string): Project {
  return {
    dir: DIR,
    settings: {
      projectId: 'shop',
      name: 'Shop',
      flows: 'flows',
      timezone: 'UTC',
      database,
      ...(databaseSchema ? { databaseSchema } : {}),
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

const EMBEDDED_FILE = join(DIR, '.flowctl', 'flowctl.db')

describe('resolveDatabase', () => {
  it.each([
    ['embedded', {}, {}, 'embedded'],
    ['', {}, {}, 'embedded'],
    ['${secrets.DB}', { DB: 'embedded' }, {}, 'embedded'],
    ['postgres://u:p@db:5432/app', {}, {}, 'postgres://u:p@db:5432/app'],
    ['postgresql://app:${secrets.PW}@db/app', { PW: 'pw 1' }, {}, 'postgresql://app:pw 1@db/app'],
    ['embedded', {}, { FLOWCTL_DATABASE_URL: ' postgres://env@db/x ' }, 'postgres://env@db/x'],
    ['postgres://u:p@db/app', {}, { FLOWCTL_DATABASE_URL: 'embedded' }, 'embedded'],
    ['postgres://u:p@db/app', {}, { FLOWCTL_DATABASE_URL: '  ' }, 'postgres://u:p@db/app'],
  ] as const)('%j with secrets %j and env %j opens %s', (database, secrets, env, expected) => {
    const target = resolveDatabase(project(database, secrets), env)
    if (expected === 'embedded') {
      expect(target.url.startsWith('file:')).toBe(true)
      // A file: URL round-trips paths with spaces and other characters.
      expect(fileURLToPath(target.url)).toBe(EMBEDDED_FILE)
    } else {
      expect(target.url).toBe(expected)
    }
  })

  it('hides the URL names only when the URL came from a secret of flowctl.yaml', () => {
    expect(resolveDatabase(project('${secrets.URL}', { URL: 'postgres://r@db/d' }), {}).hideUrlNames).toBe(true)
    expect(resolveDatabase(project('postgres://r:${secrets.PW}@db/d', { PW: 'x' }), {}).hideUrlNames).toBe(true)
    expect(resolveDatabase(project('postgres://r@db/d'), {}).hideUrlNames).toBe(false)
    expect(resolveDatabase(project('${secrets.URL}', { URL: 'embedded' }), { FLOWCTL_DATABASE_URL: 'postgres://r@db/d' }).hideUrlNames).toBe(false)
  })

  it('carries the PostgreSQL schema, flowctl by default', () => {
    expect(resolveDatabase(project('postgres://r@db/d'), {}).schema).toBe('flowctl')
    expect(resolveDatabase(project('postgres://r@db/d', {}, 'app_flows'), {}).schema).toBe('app_flows')
  })

  it('names unset secrets and never echoes an unknown scheme', () => {
    expect(() => resolveDatabase(project('postgres://${secrets.A}:${secrets.B}@db/d'), {})).toThrow('the database URL uses secrets A, B, which are not set')
    for (const [database, env, source] of [
      ['mysql://root:sekret@db/app', {}, '`database` in flowctl.yaml'],
      ['${secrets.URL}', {}, '`database` in flowctl.yaml'],
      ['embedded', { FLOWCTL_DATABASE_URL: 'sqlite:sekret' }, 'FLOWCTL_DATABASE_URL'],
      ['embedded', { FLOWCTL_DATABASE_URL: 'embedded-ish' }, 'FLOWCTL_DATABASE_URL'],
    ] as const) {
      let error: (Error & { code?: string }) | undefined
      try {
        resolveDatabase(project(database, { URL: 'mysql://root:sekret@db' }), env)
      } catch (thrown) {
        error = thrown as Error & { code?: string }
      }
      expect(error?.code).toBe('USAGE')
      expect(error?.message).toBe(`${source} must be "embedded" or a postgres:// URL`)
      expect(error?.message).not.toContain('sekret')
    }
  })
})
