// A project's store: its database resolved once (src/project/database.ts), then opened with the
// document indexes flowctl.yaml declares. Used by `serve` (the store pool) and the one-shot commands.
import { FlowctlError } from '../errors.js'
import { maskSecrets } from '../language/secrets.js'
import type { Project } from '../model/project.js'
import type { Store } from '../model/store.js'
import { documentIndexesOf, resolveDatabase } from '../project/database.js'
import { openStore } from '../store/index.js'

export interface OpenProjectStoreOptions {
  /** FLOWCTL_DATABASE_URL; default process.env. */
  env?: NodeJS.ProcessEnv
}

export async function openProjectStore(project: Project, options: OpenProjectStoreOptions = {}): Promise<Store> {
  const target = resolveDatabase(project, options.env ?? process.env)
  try {
    return await openStore(target, { indexes: documentIndexesOf(project) })
  } catch (error) {
    // The store's messages may quote what came from a secret; the project's secret values never leave.
    if (!(error instanceof FlowctlError)) throw error
    const masked = maskSecrets(error.message, project.secrets)
    throw masked === error.message ? error : new FlowctlError(error.code, masked)
  }
}
