// What both stores' migration runners share: the shape of a migration and which ones a database
// still needs. Each dialect applies them under its own lock (SQLite BEGIN IMMEDIATE, PostgreSQL an
// advisory lock) and records each version in schema_migrations in the same transaction.

export interface Migration {
  version: number
  sql: string
}

/**
 * The migrations not recorded yet, in list order: every missing version, not only those above the
 * newest, since migrations written on parallel branches may reach a database in any order.
 */
export function unappliedMigrations(all: readonly Migration[], applied: Iterable<number>): Migration[] {
  const done = new Set(applied)
  return all.filter((migration) => !done.has(migration.version))
}
