// Picks the project's store: FLOWCTL_DATABASE_URL, else `database` in flowctl.yaml. `embedded`
// is SQLite under .flowctl/; a postgres:// URL is PostgreSQL (pg is loaded only then).
import { join } from 'node:path'
import { FlowctlError } from '../errors.js'
import type { Project } from '../model/project.js'
import { maskSecrets, resolveSecretText, secretNamesIn } from '../language/secrets.js'
import { DEFAULT_DATABASE_SCHEMA } from '../project/settings.js'
import { parseFieldPath, type FieldPath } from '../model/document-filter.js'
import type { DocumentIndexes, Store } from '../model/store.js'

export type { Store } from '../model/store.js'

/** Where the embedded database of a project lives. */
export function embeddedDatabaseFile(projectDir: string): string {
  return join(projectDir, '.flowctl', 'flowctl.db')
}

export interface OpenStoreOptions {
  env?: NodeJS.ProcessEnv
  /** Embedded store only: commit runs and documents on a worker thread (long-running `serve`). */
  writerThread?: boolean
}

/** The `indexes` of flowctl.yaml as field paths (invalid paths were load problems and are left out). */
export function documentIndexesOf(project: Project): DocumentIndexes {
  const indexes: Record<string, FieldPath[]> = {}
  for (const [collection, fields] of Object.entries(project.settings.indexes)) {
    indexes[collection] = fields.map(parseFieldPath).filter((path): path is FieldPath => typeof path !== 'string')
  }
  return indexes
}

/** Opens the project's store and creates the document indexes flowctl.yaml declares (idempotent). */
export async function openStore(project: Project, options: OpenStoreOptions = {}): Promise<Store> {
  const store = await openStoreOnly(project, options)
  try {
    await store.ensureIndexes(documentIndexesOf(project))
  } catch (error) {
    await store.close().catch(() => {})
    throw error
  }
  return store
}

async function openStoreOnly(project: Project, options: OpenStoreOptions): Promise<Store> {
  const env = options.env ?? process.env
  const override = env.FLOWCTL_DATABASE_URL?.trim()
  const setting = override ? override : project.settings.database.trim() || 'embedded'

  if (setting === 'embedded') {
    const { openSqliteStore } = await import('./sqlite.js')
    return openSqliteStore(embeddedDatabaseFile(project.dir), { writerThread: options.writerThread })
  }
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
  if (url === 'embedded' && !override) {
    const { openSqliteStore } = await import('./sqlite.js')
    return openSqliteStore(embeddedDatabaseFile(project.dir), { writerThread: options.writerThread })
  }
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const { openPostgresStore } = await import('./postgres.js')
    // A URL from a secret is a secret as a whole: its role and database names stay out of messages too.
    const hideUrlNames = !override && secretNamesIn(setting).length > 0
    try {
      return await openPostgresStore(url, { schema: project.settings.databaseSchema ?? DEFAULT_DATABASE_SCHEMA, adoptPublicTables: true, hideUrlNames })
    } catch (error) {
      if (error instanceof FlowctlError) throw new FlowctlError(error.code, maskSecrets(error.message, project.secrets))
      throw error
    }
  }
  // Never echo the value: it may be a URL of another scheme with a password in it.
  const source = override ? 'FLOWCTL_DATABASE_URL' : '`database` in flowctl.yaml'
  throw new FlowctlError('USAGE', `${source} must be "embedded" or a postgres:// URL`)
}
