// `database` in flowctl.yaml may come from a secret (`${secrets.DATABASE_URL}`): checked once the
// secrets are loaded, so `validate` reports what would make the store fail to open. Values are never
// shown (a database URL holds a password).
import { resolveSecretText, secretNamesIn } from '../language/secrets.js'
import { isPostgresUrl } from '../model/database.js'
import type { Secrets } from '../model/project.js'
import type { ProblemCollector } from './yaml-source.js'

/** Whether a (resolved) database setting is one flowctl can open. */
function isDatabaseSetting(value: string): boolean {
  const setting = value.trim()
  return setting === '' || setting === 'embedded' || isPostgresUrl(setting)
}

export function checkDatabaseSetting(database: string, secrets: Secrets, env: NodeJS.ProcessEnv, collector: ProblemCollector, path: (string | number)[]): void {
  // FLOWCTL_DATABASE_URL replaces the setting; the store checks that one when it opens.
  if (env.FLOWCTL_DATABASE_URL?.trim()) return
  const names = secretNamesIn(database)
  if (names.length === 0) return
  const missing = names.filter((name) => !secrets.has(name))
  if (missing.length > 0) {
    const list = missing.map((name) => `"${name}"`).join(', ')
    // A warning, as for flows: CI may validate without the production secrets.
    collector.warning(
      path,
      `database uses secret ${list}, which is not set (in the secrets file or FLOWCTL_SECRET_${missing[0]}); the store cannot open without it`,
    )
    return
  }
  const resolved = resolveSecretText(database, secrets) ?? ''
  if (!isDatabaseSetting(resolved)) {
    collector.error(
      path,
      `database, once secret ${names.map((name) => `"${name}"`).join(', ')} is filled in, is neither "embedded" nor a postgres:// URL (the value is not shown: it may hold a password)`,
    )
  }
}
