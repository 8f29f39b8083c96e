// Opens a store from a resolved database target (src/project/database.ts resolves a project's):
// a file: URL is the embedded SQLite store, a postgres:// URL is PostgreSQL (pg is loaded only then).
import { fileURLToPath } from 'node:url'
import { FlowctlError } from '../errors.js'
import { isPostgresUrl, type DatabaseTarget } from '../model/database.js'
import type { DocumentIndexes, Store } from '../model/store.js'

export type { Store } from '../model/store.js'
export type { DatabaseTarget } from '../model/database.js'

export interface OpenStoreOptions {
  /** Document indexes to create (idempotent); a failure closes the store and throws. */
  indexes?: DocumentIndexes
}

/** Opens the store at `target` and creates the document indexes asked for. */
export async function openStore(target: DatabaseTarget, options: OpenStoreOptions = {}): Promise<Store> {
  const store = await openStoreOnly(target)
  try {
    await store.documents.ensureIndexes(options.indexes ?? {})
  } catch (error) {
    await store.close().catch(() => {})
    throw error
  }
  return store
}

async function openStoreOnly(target: DatabaseTarget): Promise<Store> {
  if (target.url.startsWith('file:')) {
    const { openSqliteStore } = await import('./sqlite/index.js')
    return openSqliteStore(fileURLToPath(target.url))
  }
  if (isPostgresUrl(target.url)) {
    const { openPostgresStore } = await import('./postgres/index.js')
    return openPostgresStore(target.url, { schema: target.schema, adoptPublicTables: true, hideUrlNames: target.hideUrlNames })
  }
  // Never echo the value: it may be a URL of another scheme with a password in it.
  throw new FlowctlError('USAGE', 'a database URL must be a file: URL (embedded) or a postgres:// URL')
}
