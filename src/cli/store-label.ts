// How the serve banner names a project's store (SPEC §21): the SQLite file, or the PostgreSQL host
// and database. Never the role or password; when the URL came from a secret, not the database name
// either (the store keeps those out of its messages too).
import { fileURLToPath } from 'node:url'
import { resolveDatabase } from '../project/database.js'
import type { Project } from '../model/project.js'

export function describeStore(project: Project, env: NodeJS.ProcessEnv): string {
  const target = resolveDatabase(project, env)
  if (target.url.startsWith('file:')) return `SQLite ${fileURLToPath(target.url)}`
  let url: URL
  try {
    url = new URL(target.url)
  } catch {
    return 'PostgreSQL'
  }
  // postgres:///db?host=/var/run/postgresql names a socket folder instead of a host.
  const host = (url.hostname || url.searchParams.get('host') || 'localhost') + (url.port ? `:${url.port}` : '')
  const schema = target.schema === 'public' ? '' : `, schema ${target.schema}`
  if (target.hideUrlNames) return `PostgreSQL ${host} (database name not shown: the URL comes from a secret${schema})`
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(default database)'
  return `PostgreSQL ${host}/${database}${schema ? ` (${schema.slice(2)})` : ''}`
}
