// Builds the real app in-process: a temp copy of fixtures/example (plus extra flow files), loaded
// with the real loader, a real SQLite store, requests through `app.fetch` (no socket).
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createApp, type AppOptions } from '../../src/http/app.js'
import { Workspace } from '../../src/serve/workspace.js'
import { loadProject } from '../../src/project/load.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { copyFixture, makeTempDir } from '../helpers.js'

export const ORDERS_TOKEN = 'dev-orders-token-change-me'

export interface TestServer {
  dir: string
  workspace: Workspace
  logs: string[]
  request(path: string, init?: RequestInit): Promise<Response>
  close(): Promise<void>
}

export interface TestServerOptions {
  /** The fixture copied (default `example`). */
  fixture?: string
  flows?: Record<string, string>
  /** Replaces text in flowctl.yaml: [search, replacement] pairs. */
  settings?: [string, string][]
  env?: string
  app?: Partial<AppOptions>
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = await copyFixture(options.fixture ?? 'example')
  for (const [name, text] of Object.entries(options.flows ?? {})) await writeFile(join(dir, 'flows', name), text)
  if (options.settings) {
    const file = join(dir, 'flowctl.yaml')
    const { readFile } = await import('node:fs/promises')
    let text = await readFile(file, 'utf8')
    for (const [from, to] of options.settings) text = text.replace(from, to)
    await writeFile(file, text)
  }
  if (options.env !== undefined) await writeFile(join(dir, '.env'), options.env)
  const project = await loadProject(dir, { env: {} })
  const workspace = new Workspace((p) => openProjectStore(p, { env: {} }))
  await workspace.add(project)
  const usersDir = await makeTempDir('flowctl-users-')
  const logs: string[] = []
  const app = createApp(workspace, {
    trustProxy: false,
    quiet: false,
    usersFile: join(usersDir, 'users.yaml'),
    fallbackClientIp: '127.0.0.1',
    log: (line) => logs.push(line),
    ...options.app,
  })
  return {
    dir,
    workspace,
    logs,
    request: async (path, init) => app.fetch(new Request(`http://localhost${path}`, init)),
    close: () => workspace.close(),
  }
}

export function jsonPost(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } }
}
