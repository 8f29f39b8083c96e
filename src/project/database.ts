// Resolves a project's database to what the store opens: FLOWCTL_DATABASE_URL, else `database` in
// flowctl.yaml with its `${secrets.X}` filled in; `embedded` is SQLite under .flowctl/ as a file: URL.
// This is the only place that reads those settings for opening a store.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { FlowctlError } from '../errors.js'
import { resolveSecretText, secretNamesIn } from '../language/secrets.js'
import { isPostgresUrl, type DatabaseTarget } from '../model/database.js'
import { parseFieldPath, type FieldPath } from '../model/document-filter.js'
import type { Project } from '../model/project.js'
import type { DocumentIndexes } from '../model/store.js'
import { DEFAULT_DATABASE_SCHEMA } from './settings.js'

/** Where the embedded database of a project lives. */
function embeddedDatabaseFile(projectDir: string): string {
  return join(projectDir, '.flowctl', 'flowctl.db')
}

/** The store a project opens. Throws (never echoing the value) when a secret is missing or the scheme is unknown. */
export function resolveDatabase(project: Project, env: NodeJS.ProcessEnv = process.env): DatabaseTarget {
  const override = env.FLOWCTL_DATABASE_URL?.trim()
  const setting = override ? override : project.settings.database.trim() || 'embedded'
  const schema = project.settings.databaseSchema ?? DEFAULT_DATABASE_SCHEMA
  const embedded: DatabaseTarget = { url: pathToFileURL(embeddedDatabaseFile(project.dir)).href, schema, hideUrlNames: false }
  if (setting === 'embedded') return embedded
  // The URL may come whole from a secret (`${secrets.DATABASE_URL}`): the scheme is checked once filled in.
  const url = resolveSecretText(setting, project.secrets)?.trim() ?? null
  if (url === null) {
    const missing = secretNamesIn(setting).filter((name) => !project.secrets.has(name))
    const names = missing.join(', ')
    throw new FlowctlError(
      'STORE_UNAVAILABLE',
      `the database URL uses secret${missing.length > 1 ? 's' : ''} ${names}, which ${missing.length > 1 ? 'are' : 'is'} not set`,
    )
  }
  if (url === 'embedded' && !override) return embedded
  if (isPostgresUrl(url)) return { url, schema, hideUrlNames: !override && secretNamesIn(setting).length > 0 }
  // Never echo the value: it may be a URL of another scheme with a password in it.
  const source = override ? 'FLOWCTL_DATABASE_URL' : '`database` in flowctl.yaml'
  throw new FlowctlError('USAGE', `${source} must be "embedded" or a postgres:// URL`)
}

/** The `indexes` of flowctl.yaml as field paths (invalid paths were load problems and are left out). */
export function documentIndexesOf(project: Project): DocumentIndexes {
  const indexes: Record<string, FieldPath[]> = {}
  for (const [collection, fields] of Object.entries(project.settings.indexes)) {
    indexes[collection] = fields.map(parseFieldPath).filter((path): path is FieldPath => typeof path !== 'string')
  }
  return indexes
}
