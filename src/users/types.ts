// Users of a workspace and their roles on projects.

export type Role = 'viewer' | 'editor' | 'owner'

const ROLES: readonly Role[] = ['viewer', 'editor', 'owner']

export interface UserEntry {
  name: string
  /** SHA-256 of the token, lower-case hex. The token itself is never stored. */
  tokenHash: string
  /** Role by project id; a project not listed is not accessible. */
  grants: Record<string, Role>
  /** ISO 8601. */
  createdAt: string
}

export const USER_NAME_PATTERN = /^[A-Za-z0-9_.-]+$/
export const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]*$/

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

/** Whether a role includes what `needed` may do: viewer < editor < owner. */
export function roleAllows(role: Role | null, needed: Role): boolean {
  return role !== null && ROLES.indexOf(role) >= ROLES.indexOf(needed)
}
