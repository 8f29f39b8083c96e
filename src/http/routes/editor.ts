// The browser editor (SPEC "Editing flows in the browser"): the page `/edit/<projectId>[/<slug>]`,
// its bundled assets (`/edit/_assets/<file>`: no project id starts with `_`; built by scripts/bundle-editor.mjs into dist/editor/,
// a fixed list of names, so no path from the request reaches the file system), the node kinds it
// draws its palette and forms from, and the check it calls as one types. The flow file itself is
// read and written through the flows API (routes/flows.ts). Who may: as that API, a loopback
// request or a signed-in editor or owner; the page carries no flow text and no secret.
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { getRouterParam, type H3Event } from 'h3'
import { parseDocument } from 'yaml'
import { httpError } from '../../errors.js'
import type { Project } from '../../model/project.js'
import { SHARED_DEFS } from '../../project/ajv.js'
import { checkFlowFile } from '../../project/flow-file.js'
import { getNodeKind, nodeKinds } from '../../nodes/registry.js'
import { callerOf, isCrossSite, projectAccess, requireAccess } from '../access.js'
import { CHALLENGES } from '../authorization.js'
import { readRequestText } from '../body.js'
import type { AppContext } from '../context.js'
import { html, SafeHtml } from '../html.js'
import { messagePage } from '../pages/layout.js'
import { htmlResponse, jsonResponse } from '../respond.js'

const ASSETS: Record<string, string> = {
  'editor.js': 'text/javascript; charset=utf-8',
  'editor.css': 'text/css; charset=utf-8',
}

/** dist/editor/ from tsc's output (dist/http/routes/) or from the CLI bundle (dist/bin/). */
function assetDir(): string {
  for (const candidate of ['../../editor/', '../editor/', '../../../dist/editor/']) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url))
    if (existsSync(join(dir, 'editor.js'))) return dir
  }
  throw httpError('NOT_FOUND', ['the editor is not built: run npm run build'])
}

const assetCache = new Map<string, Buffer>()

export function editorAssetHandler() {
  return async (event: H3Event): Promise<Response> => {
    const name = getRouterParam(event, 'file') ?? ''
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined
    if (!type) throw httpError('NOT_FOUND')
    let content = assetCache.get(name)
    if (!content) {
      content = await readFile(join(assetDir(), name))
      assetCache.set(name, content)
    }
    return new Response(new Uint8Array(content), {
      status: 200,
      headers: { 'content-type': type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
    })
  }
}

/** The pages' strict policy, with the bundle as the one script (by nonce) and styles from 'self' and inline (React Flow, CodeMirror). */
function editorPolicy(nonce: string): string {
  return `default-src 'none'; style-src 'self' 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`
}

export function editorPageHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const slug = getRouterParam(event, 'slug') ?? ''
    const access = await projectAccess(context, event, projectId, 'run')
    if (!access.ok) {
      const { httpStatus } = access.error
      const reason =
        httpStatus === 401
          ? 'Sign in at /sign-in with a user token (from "flowctl users add"), or open this page on the server\'s own machine.'
          : httpStatus === 403
            ? 'Editing flows needs the editor or owner role on this project.'
            : 'This server has no such project.'
      return messagePage(httpStatus, httpStatus === 401 ? 'Sign-in needed' : httpStatus === 403 ? 'Not allowed' : 'Not found', reason)
    }
    const nonce = randomBytes(12).toString('base64')
    const title = slug ? `Edit ${slug}` : 'New flow'
    const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${access.entry.project.settings.name} · flowctl</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/edit/_assets/editor.css"></head>
<body data-project="${projectId}" data-slug="${slug}">
<div id="editor"><p style="padding:24px">Loading the editor…</p></div>
<noscript><p style="padding:24px">The editor needs JavaScript. The flow file can be edited in any text editor; <code>flowctl validate</code> checks it.</p></noscript>
${scriptTag(nonce)}
</body></html>`
    return htmlResponse(200, page.value, { 'cache-control': 'no-store', 'content-security-policy': editorPolicy(nonce), 'referrer-policy': 'same-origin' })
  }
}

// Built outside the tagged template: a bundler rewrites a closing script tag inside one.
function scriptTag(nonce: string): SafeHtml {
  return new SafeHtml(`<script type="module" nonce="${nonce}" src="/edit/_assets/editor.js"></script>`)
}

/** Every registered kind: its description, settings schema, default ports; with the shared `$defs` they point at. */
export function kindsHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const caller = await callerOf(context, event)
    if (caller.kind === 'anonymous') throw httpError('AUTH_REQUIRED', undefined, { headers: { 'www-authenticate': CHALLENGES.bearer } })
    const kinds = [...nodeKinds.values()].map((kind) => ({
      type: kind.type,
      description: kind.description,
      settingsSchema: kind.settingsSchema,
      ports: kind.terminates ? [] : kind.ports({}),
      singlePort: kind.singlePort,
      terminates: kind.terminates === true,
    }))
    return jsonResponse(200, { kinds, defs: SHARED_DEFS }, { 'cache-control': 'no-store' })
  }
}

/**
 * `POST /api/flows/<projectId>/<slug>/check` `{ text }` → `{ problems, ports }`: the problems the
 * loader would report for this text as that flow's file, and each node's ports for its settings.
 * Nothing is written. Cross-file checks (the flows a call node names) wait for the save.
 */
export function checkHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const { entry } = await requireAccess(context, event, projectId, 'run')
    if (isCrossSite(event)) throw httpError('FORBIDDEN', ['cross-site request refused'])
    const project = entry.project
    const raw = await readRequestText(event, project.settings.limits.bodyLimitBytes)
    if (raw === null) throw httpError('BODY_TOO_LARGE')
    const text = textOf(raw)
    const file = fileOf(project, getRouterParam(event, 'slug') ?? '')
    const { timezone, secrets: secretsFile, cors } = project.settings
    const result = checkFlowFile(file, text, { timezone, secrets: project.secrets, secretsFile, cors })
    return jsonResponse(200, { problems: result.problems, ports: portsOf(text) }, { 'cache-control': 'no-store' })
  }
}

function textOf(raw: string): string {
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch {
    throw httpError('BAD_REQUEST', ['body: not valid JSON'])
  }
  const text = (body as { text?: unknown } | null)?.text
  if (typeof text !== 'string') throw httpError('BAD_REQUEST', ['body/text: must be a string'])
  return text
}

/** The flow's file, relative to the project; a flow not loaded (new, or never valid) is `<flows>/<slug>.yaml`. */
function fileOf(project: Project, slug: string): string {
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(slug)) throw httpError('BAD_REQUEST', ['slug: must be a slug (a-z, 0-9 and single hyphens)'])
  return project.flows.get(slug)?.file ?? `${project.settings.flows}/${slug}.yaml`
}

/** Each node's ports as its kind gives them for its settings; nodes of unknown kinds have none. */
function portsOf(text: string): Record<string, string[]> {
  let data: { nodes?: unknown } | null
  try {
    data = parseDocument(text).toJS() as { nodes?: unknown } | null
  } catch {
    return {}
  }
  const ports: Record<string, string[]> = {}
  if (!data || !Array.isArray(data.nodes)) return ports
  for (const node of data.nodes as Record<string, unknown>[]) {
    const kind = node && typeof node.type === 'string' ? getNodeKind(node.type) : undefined
    if (!kind || typeof node.id !== 'string') continue
    try {
      const { id: _id, type: _type, name: _name, next: _next, ...settings } = node
      ports[node.id] = kind.terminates ? [] : kind.ports(settings)
    } catch {
      ports[node.id] = []
    }
  }
  return ports
}
