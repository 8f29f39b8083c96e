// Signed-in users of the read APIs (/api/openapi, /api/runs, /status details): a bearer user token
// checked against the users file. The file is read once and again only when its mtime changes.
import { stat } from 'node:fs/promises'
import { authenticateToken, readUsers, roleFor, type Role, type UserEntry } from '../users/users-file.js'

export class UsersCache {
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

  /** The user whose token is in `Authorization: Bearer <token>`, or null. */
  async signIn(headers: Headers): Promise<UserEntry | null> {
    const header = headers.get('authorization')
    const match = header ? /^bearer\s+(\S+)\s*$/i.exec(header) : null
    if (!match) return null
    return authenticateToken(await this.users(), match[1]!)
  }
}

export function projectRole(user: UserEntry | null, projectId: string): Role | null {
  return user ? roleFor(user, projectId) : null
}

export const USER_CHALLENGE = 'Bearer realm="flowctl"'
