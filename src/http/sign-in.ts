// Signed-in users of the read APIs (/api/openapi, /api/runs, /status details): a bearer user token
// checked against the users files (the workspace's, then each served project's own). Each file is
// read once and again only when its mtime changes.
import { stat } from 'node:fs/promises'
import { authenticateToken, readUsers, roleFor, type Role, type UserEntry } from '../users/users-file.js'
import { authorizationCredentials } from './authorization.js'

/** The sign-in cookie of the pages (routes/sign-in.ts sets it); the read APIs accept its token. */
export const TOKEN_COOKIE = 'flowctl_token'

/** The token of the sign-in cookie, or null. */
export function cookieToken(headers: Headers): string | null {
  const cookie = headers.get('cookie')
  if (!cookie) return null
  for (const part of cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=')
    if (name === TOKEN_COOKIE) return decodeURIComponent(rest.join('=')) || null
  }
  return null
}

export class UsersCache {
  readonly #files: UsersFileCache[]

  constructor(files: string | string[]) {
    this.#files = [...new Set(typeof files === 'string' ? [files] : files)].map((file) => new UsersFileCache(file))
  }

  async users(): Promise<UserEntry[]> {
    if (this.#files.length === 1) return this.#files[0]!.users()
    return (await Promise.all(this.#files.map((file) => file.users()))).flat()
  }

  /** The user whose token is in `Authorization: Bearer <token>`, or null. */
  async signIn(headers: Headers): Promise<UserEntry | null> {
    const token = authorizationCredentials(headers, 'bearer')
    if (!token) return null
    return authenticateToken(await this.users(), token)
  }
}

class UsersFileCache {
  #mtimeMs = -1
  #users: UserEntry[] = []

  constructor(readonly file: string) {}

  async users(): Promise<UserEntry[]> {
    let mtimeMs: number
    try {
      mtimeMs = (await stat(this.file)).mtimeMs
    } catch {
      // No users file: nobody can sign in.
      this.#mtimeMs = -1
      this.#users = []
      return this.#users
    }
    if (mtimeMs !== this.#mtimeMs) {
      try {
        this.#users = await readUsers(this.file)
        this.#mtimeMs = mtimeMs
      } catch {
        // An unreadable or invalid users file signs nobody in (fail closed) until it is fixed.
        this.#users = []
        this.#mtimeMs = -1
      }
    }
    return this.#users
  }
}

export function projectRole(user: UserEntry | null, projectId: string): Role | null {
  return user ? roleFor(user, projectId) : null
}
