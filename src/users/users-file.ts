// The workspace's users file (.flowctl/users.yaml): who may read a project's OpenAPI document and
// run history. Only a SHA-256 hash of each token is stored; the token is shown once, when added.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { stringify } from 'yaml'
import { FlowctlError } from '../errors.js'
import { temporaryPathBeside } from '../internal/ids.js'
import { withFileLock } from './file-lock.js'
import { parseUsersText } from './parse-users.js'
import { isRole, PROJECT_ID_PATTERN, USER_NAME_PATTERN, type Role, type UserEntry } from './types.js'

export { roleAllows, type Role, type UserEntry } from './types.js'

const TOKEN_PREFIX = 'flowctl_'

export function defaultUsersFile(cwd: string): string {
  return join(cwd, '.flowctl', 'users.yaml')
}

/** The users of a file; a missing file means no users yet. */
export async function readUsers(file: string): Promise<UserEntry[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw new FlowctlError('IO_FAILED', `cannot read the users file ${file}: ${(error as Error).message}`, { cause: error })
  }
  await tightenUsersFile(file)
  return parseUsersText(text, file)
}

/**
 * Token hashes are for the owner's eyes only (SPEC §19): a users file or `.flowctl` folder made
 * wider by an older flowctl or by hand is narrowed to 0600 / 0700 when read. Best effort: a file
 * that is not ours to change is left as it is.
 */
async function tightenUsersFile(file: string): Promise<void> {
  const folder = dirname(file)
  const targets: [string, number][] = [[file, 0o600]]
  if (basename(folder) === '.flowctl') targets.push([folder, 0o700])
  for (const [path, mode] of targets) {
    try {
      const current = (await stat(path)).mode & 0o777
      if ((current & ~mode) !== 0) await chmod(path, current & mode)
    } catch {
      // Not ours, or gone meanwhile.
    }
  }
}

/** Adds a user and returns their new token: the only time it exists outside the caller. */
export async function addUser(file: string, name: string, grants: Record<string, Role>): Promise<{ name: string; token: string }> {
  if (!USER_NAME_PATTERN.test(name)) {
    throw new FlowctlError('USAGE', `a user name may hold only letters, digits, ".", "_" and "-", got "${name}"`)
  }
  for (const [projectId, role] of Object.entries(grants)) checkGrant(projectId, role)
  return changeUsers(file, (users) => {
    if (users.some((user) => user.name === name)) throw new FlowctlError('CONFLICT', `a user named "${name}" already exists`)
    const token = newToken()
    users.push({ name, tokenHash: hashToken(token), grants: { ...grants }, createdAt: new Date().toISOString() })
    return { users, result: { name, token } }
  })
}

/** Gives a user a role on a project (replacing the role they had there). */
export async function grantUser(file: string, name: string, projectId: string, role: Role): Promise<void> {
  checkGrant(projectId, role)
  await changeUsers(file, (users) => {
    const user = findUser(users, name)
    user.grants = { ...user.grants, [projectId]: role }
    return { users, result: undefined }
  })
}

/** Gives a user a new token (the old one stops working at once); their grants stay. */
export async function rotateToken(file: string, name: string): Promise<{ name: string; token: string }> {
  return changeUsers(file, (users) => {
    const user = findUser(users, name)
    const token = newToken()
    user.tokenHash = hashToken(token)
    return { users, result: { name, token } }
  })
}

export async function removeUser(file: string, name: string): Promise<void> {
  await changeUsers(file, (users) => {
    const user = findUser(users, name)
    return { users: users.filter((other) => other !== user), result: undefined }
  })
}

/** Read, change, write under the file's lock, so concurrent commands never lose each other's change. */
async function changeUsers<T>(file: string, change: (users: UserEntry[]) => { users: UserEntry[]; result: T }): Promise<T> {
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 })
  } catch (error) {
    throw new FlowctlError('IO_FAILED', `cannot create the folder of the users file ${file}: ${(error as Error).message}`, { cause: error })
  }
  return withFileLock(file, async () => {
    const { users, result } = change(await readUsers(file))
    await writeUsers(file, users)
    return result
  })
}

/** The user holding this token, or null. Every stored hash is compared, each in constant time. */
export function authenticateToken(users: UserEntry[], token: string): UserEntry | null {
  if (!token) return null
  const presented = createHash('sha256').update(token).digest()
  let match: UserEntry | null = null
  for (const user of users) {
    const stored = Buffer.from(user.tokenHash, 'hex')
    if (stored.length === presented.length && timingSafeEqual(stored, presented) && !match) match = user
  }
  return match
}

export function roleFor(user: UserEntry, projectId: string): Role | null {
  return Object.hasOwn(user.grants, projectId) ? (user.grants[projectId] ?? null) : null
}

function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url')
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

function findUser(users: UserEntry[], name: string): UserEntry {
  const user = users.find((candidate) => candidate.name === name)
  if (!user) throw new FlowctlError('USER_NOT_FOUND', `no user named "${name}"`)
  return user
}

function checkGrant(projectId: string, role: string): void {
  if (!PROJECT_ID_PATTERN.test(projectId)) {
    throw new FlowctlError('USAGE', `a project id is lower-case letters, digits, "_" and "-", got "${projectId}"`)
  }
  if (!isRole(role)) throw new FlowctlError('USAGE', `a role is viewer, editor or owner, got "${role}"`)
}

/** Writes a temp file beside the target (its folder exists: changeUsers made it) and renames it over, so readers never see half a file. */
async function writeUsers(file: string, users: UserEntry[]): Promise<void> {
  const text =
    '# flowctl users: managed by `flowctl users`. Only token hashes are stored here.\n' +
    stringify({ users: users.map(({ name, tokenHash, grants, createdAt }) => ({ name, tokenHash, grants, createdAt })) })
  const temp = temporaryPathBeside(file)
  try {
    await writeFile(temp, text, { mode: 0o600 })
    await rename(temp, file)
  } catch (error) {
    await rm(temp, { force: true })
    throw new FlowctlError('IO_FAILED', `cannot write the users file ${file}: ${(error as Error).message}`, { cause: error })
  }
}
