// Where a store lives, resolved once from a project (`database:` in flowctl.yaml, its secrets,
// FLOWCTL_DATABASE_URL and the embedded path; src/project/database.ts) and handed to the store,
// which never sees the project.
export interface DatabaseTarget {
  /** `file:` URL of the embedded SQLite database, or a postgres:// (postgresql://) URL. */
  url: string
  /** PostgreSQL schema of flowctl's tables. */
  schema: string
  /** The URL came from a secret, so it is a secret as a whole: its role and database names stay out of messages too. */
  hideUrlNames: boolean
}

/** A PostgreSQL URL (`postgres://` or `postgresql://`, any case): the one test of the scheme. */
export function isPostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//i.test(text)
}
