import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FlowctlError, type ErrorCode } from '../../src/errors.js'
import { addUser, authenticateToken, defaultUsersFile, grantUser, readUsers, removeUser, roleAllows, roleFor } from '../../src/users/users-file.js'

let dir: string
let file: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-users-'))
  file = defaultUsersFile(dir)
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function usageError(promise: Promise<unknown>, code: ErrorCode = 'USAGE'): Promise<FlowctlError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(FlowctlError)
  expect((error as FlowctlError).code).toBe(code)
  return error as FlowctlError
}

describe('users file', () => {
  it('lives in .flowctl/users.yaml of the folder', () => {
    expect(defaultUsersFile('/ws')).toBe(join('/ws', '.flowctl', 'users.yaml'))
  })

  it('a missing file means no users', async () => {
    expect(await readUsers(file)).toEqual([])
  })

  it('adds, lists, grants and removes users', async () => {
    const ada = await addUser(file, 'ada', { shop: 'owner' })
    const bob = await addUser(file, 'bob.smith_2', {})
    expect(ada.name).toBe('ada')
    expect(ada.token).toMatch(/^flowctl_[A-Za-z0-9_-]{43}$/) // 32 bytes in base64url
    expect(bob.token).not.toBe(ada.token)

    let users = await readUsers(file)
    expect(users.map((u) => u.name)).toEqual(['ada', 'bob.smith_2'])
    expect(users[0]!.grants).toEqual({ shop: 'owner' })
    expect(users[1]!.grants).toEqual({})
    expect(Date.parse(users[0]!.createdAt)).not.toBeNaN()

    await grantUser(file, 'bob.smith_2', 'shop', 'viewer')
    await grantUser(file, 'bob.smith_2', 'billing', 'editor')
    await grantUser(file, 'bob.smith_2', 'shop', 'editor') // replaces the earlier role
    users = await readUsers(file)
    expect(users[1]!.grants).toEqual({ shop: 'editor', billing: 'editor' })

    await removeUser(file, 'ada')
    users = await readUsers(file)
    expect(users.map((u) => u.name)).toEqual(['bob.smith_2'])
    expect(authenticateToken(users, ada.token)).toBeNull()
    expect(authenticateToken(users, bob.token)?.name).toBe('bob.smith_2')
  })

  it('stores only a SHA-256 hash of the token, in a file only its owner may read', async () => {
    const { token } = await addUser(file, 'ada', { shop: 'viewer' })
    const text = await readFile(file, 'utf8')
    expect(text).not.toContain(token)
    expect(text).not.toContain(token.slice('flowctl_'.length))
    const data = parse(text) as { users: { name: string; tokenHash: string; grants: object; createdAt: string }[] }
    expect(data.users[0]).toEqual({
      name: 'ada',
      tokenHash: createHash('sha256').update(token).digest('hex'),
      grants: { shop: 'viewer' },
      createdAt: expect.any(String),
    })
    if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600)
  })

  it('authenticates the right token only', async () => {
    const ada = await addUser(file, 'ada', { shop: 'owner' })
    const bob = await addUser(file, 'bob', {})
    const users = await readUsers(file)
    expect(authenticateToken(users, ada.token)?.name).toBe('ada')
    expect(authenticateToken(users, bob.token)?.name).toBe('bob')
    expect(authenticateToken(users, `${ada.token}x`)).toBeNull()
    expect(authenticateToken(users, ada.token.slice(0, -1))).toBeNull()
    expect(authenticateToken(users, 'flowctl_unknown')).toBeNull()
    expect(authenticateToken(users, '')).toBeNull()
    expect(authenticateToken([], ada.token)).toBeNull()
    // A malformed stored hash never matches (and never throws on the length mismatch).
    expect(authenticateToken([{ ...users[0]!, tokenHash: 'abc' }], ada.token)).toBeNull()
  })

  it('rejects duplicate and malformed names, unknown users, bad grants', async () => {
    await addUser(file, 'ada', {})
    expect((await usageError(addUser(file, 'ada', { shop: 'viewer' }), 'CONFLICT')).message).toBe('a user named "ada" already exists')
    await usageError(addUser(file, 'bad name', {}))
    await usageError(addUser(file, '', {}))
    await usageError(addUser(file, 'eve', { Shop: 'viewer' }))
    await usageError(addUser(file, 'eve', { shop: 'admin' as 'owner' }))
    expect((await usageError(grantUser(file, 'bob', 'shop', 'viewer'), 'USER_NOT_FOUND')).message).toBe('no user named "bob"')
    await usageError(grantUser(file, 'ada', 'shop', 'root' as 'owner'))
    expect((await usageError(removeUser(file, 'bob'), 'USER_NOT_FOUND')).message).toBe('no user named "bob"')
    expect((await readUsers(file)).map((u) => u.name)).toEqual(['ada'])
  })

  it('writes atomically: a valid file and no temp files left behind, even with writes in a row', async () => {
    await Promise.all([addUser(join(dir, 'a', 'users.yaml'), 'one', {}), addUser(join(dir, 'b', 'users.yaml'), 'two', {})])
    for (let i = 0; i < 5; i++) await addUser(file, `user${i}`, { shop: 'viewer' })
    expect((await readUsers(file)).length).toBe(5)
    expect((await readdir(join(dir, '.flowctl'))).sort()).toEqual(['users.yaml'])
    expect(await readdir(join(dir, 'a'))).toEqual(['users.yaml'])
  })

  it('readers never see a half-written file while users are being added', async () => {
    await addUser(file, 'first', {})
    let writing = true
    const writer = (async () => {
      for (let i = 0; i < 15; i++) await addUser(file, `user${i}`, { shop: 'viewer' })
      writing = false
    })()
    const counts: number[] = []
    while (writing) counts.push((await readUsers(file)).length) // throws on a torn file
    await writer
    expect(counts.length).toBeGreaterThan(0)
    expect(counts).toEqual([...counts].sort((x, y) => x - y))
    expect((await readUsers(file)).length).toBe(16)
  })
})

describe('reading a malformed users file', () => {
  async function problemsOf(text: string) {
    await mkdir(join(dir, '.flowctl'), { recursive: true })
    await writeFile(file, text)
    const error = await usageError(readUsers(file), 'USERS_FILE_INVALID')
    expect(error.message).toContain(file)
    return error.problems.map((p) => ({ file: p.file, line: p.line, column: p.column, message: p.message }))
  }

  it('reports YAML syntax errors with line and column', async () => {
    const problems = await problemsOf('users:\n  - name: ada\n    grants: { shop: viewer\n')
    expect(problems[0]).toMatchObject({ file, line: expect.any(Number), column: expect.any(Number) })
    expect(problems[0]!.line).toBeGreaterThanOrEqual(3)
    expect(problems[0]!.message).not.toMatch(/at line/)
  })

  it('points at the bad field of a user', async () => {
    const hash = 'a'.repeat(64)
    const text = [
      'users:',
      `  - name: ada`,
      `    tokenHash: ${hash}`,
      `    grants: { shop: admin }`,
      `    createdAt: "2026-01-01T00:00:00.000Z"`,
      `  - name: ada`,
      `    tokenHash: nothex`,
      `    createdAt: "2026-01-01T00:00:00.000Z"`,
      '',
    ].join('\n')
    expect(await problemsOf(text)).toEqual([
      { file, line: 4, column: 21, message: 'the role of "shop" must be viewer, editor or owner' },
      { file, line: 6, column: 11, message: 'the user name "ada" appears twice' },
      { file, line: 7, column: 16, message: 'tokenHash must be a SHA-256 hash in lower-case hex' },
    ])
  })

  it('rejects a file that is not a users list', async () => {
    expect(await problemsOf('- a\n- b\n')).toEqual([{ file, line: 1, column: 1, message: 'expected a "users:" list' }])
    expect(await problemsOf('users: 5\n')).toEqual([{ file, line: 1, column: 8, message: '"users" must be a list' }])
  })

  it('treats an empty file or an empty list as no users', async () => {
    await mkdir(join(dir, '.flowctl'), { recursive: true })
    for (const text of ['', '# nothing yet\n', 'users:\n', 'users: []\n']) {
      await writeFile(file, text)
      expect(await readUsers(file)).toEqual([])
    }
  })
})

describe('roles', () => {
  const user = { name: 'ada', tokenHash: 'a'.repeat(64), grants: { shop: 'editor' as const }, createdAt: '2026-01-01T00:00:00.000Z' }

  it('roleFor gives the granted role or null', () => {
    expect(roleFor(user, 'shop')).toBe('editor')
    expect(roleFor(user, 'billing')).toBeNull()
    expect(roleFor(user, 'constructor')).toBeNull()
    expect(roleFor(user, '__proto__')).toBeNull()
  })

  it.each([
    ['viewer', 'viewer', true],
    ['viewer', 'editor', false],
    ['viewer', 'owner', false],
    ['editor', 'viewer', true],
    ['editor', 'editor', true],
    ['editor', 'owner', false],
    ['owner', 'viewer', true],
    ['owner', 'editor', true],
    ['owner', 'owner', true],
    [null, 'viewer', false],
  ] as const)('%s allows %s: %s', (role, needed, allowed) => {
    expect(roleAllows(role, needed)).toBe(allowed)
  })
})
