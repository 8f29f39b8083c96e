// The browser editor (SPEC "Editing flows in the browser"): the page `/edit/<projectId>[/<slug>]`,
// its bundled assets (`/edit/_assets/<file>`: no project id starts with `_`; built by scripts/bundle-editor.mjs into dist/editor/,
// a fixed list of names, so no path from the request reaches the file system), the node kinds it
// draws its palette and forms from, and the ports of the nodes of the text being typed. The flow file itself is
// read and written through the flows API (routes/flows.ts). Who may: as that API, a loopback
// request or a signed-in editor or owner; the page carries no flow text and no secret.
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { getRouterParam, type H3Event, type HTTPResponse } from 'h3'
import { parseDocument } from 'yaml'
import { httpError } from '../../errors.js'
import { SHARED_DEFS } from '../../project/ajv.js'
import { getNodeKind, nodeKinds } from '../../nodes/registry.js'
import { callerOf, isCrossSite, projectAccess } from '../access.js'
import { answerAsset, statTag, type HeldAsset } from '../asset-answer.js'
import { CHALLENGES } from '../authorization.js'
import { readRequestText } from '../body.js'
import type { AppContext } from '../context.js'
import { html, inlineJson, SafeHtml } from '../html.js'
import { pageRoute } from '../pages/error-page.js'
import { htmlResponse, jsonResponse } from '../respond.js'

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' }

let assets: { dir: string; names: Set<string>; listedAt: number } | undefined
/**
 * The built files: dist/editor/ from tsc's output (dist/http/routes/) or from the CLI bundle
 * (dist/bin/). A request names one of them or gets a 404. The folder is listed again when a name is
 * missing and the folder changed since it was listed (a rebuild that added a chunk).
 */
function editorAssets(): { dir: string; names: Set<string>; listedAt: number } {
  if (!assets) {
    for (const candidate of ['../../editor/', '../editor/', '../../../dist/editor/']) {
      const dir = fileURLToPath(new URL(candidate, import.meta.url))
      if (existsSync(join(dir, 'editor.js'))) return (assets = listAssets(dir))
    }
    throw httpError('NOT_FOUND', ['the editor is not built: run npm run build'])
  }
  return assets
}

function listAssets(dir: string): { dir: string; names: Set<string>; listedAt: number } {
  const listedAt = statSync(dir).mtimeMs
  return { dir, names: new Set(readdirSync(dir).filter((name) => /^[a-z0-9-]+\.(js|css)$/.test(name))), listedAt }
}

/** The folder holding the file `name`, or null when the build made no such file. */
function knownAsset(name: string): string | null {
  const listed = editorAssets()
  if (listed.names.has(name)) return listed.dir
  const changedAt = statSync(listed.dir, { throwIfNoEntry: false })?.mtimeMs
  if (changedAt === undefined || changedAt === listed.listedAt) return null
  try {
    assets = listAssets(listed.dir)
  } catch {
    return null // removed again meanwhile: a build is under way
  }
  return assets.names.has(name) ? assets.dir : null
}

/**
 * Each file as last read, with the modification time and size it had. A `stat` per request tells a
 * rebuilt bundle (`npm run build` while `serve` runs) from the copy in memory, so the browser gets
 * the new editor without a restart; the file is read again only when it changed. The browser
 * revalidates each time (`no-cache`) and gets a 304 while the tag (size and time) is the same.
 */
const assetCache = new Map<string, HeldAsset & { mtimeMs: number; size: number }>()

async function currentAsset(dir: string, name: string): Promise<HeldAsset> {
  const path = join(dir, name)
  const cached = assetCache.get(name)
  try {
    const stats = await stat(path)
    if (cached && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) return cached
    const asset = { content: await readFile(path), etag: statTag(stats), mtimeMs: stats.mtimeMs, size: stats.size }
    assetCache.set(name, asset)
    return asset
  } catch (error) {
    // Mid-rebuild (the build empties dist/editor/ first): the last good copy until the new one is written.
    if (cached) return cached
    throw httpError('NOT_FOUND', undefined, { cause: error })
  }
}

export function editorAssetHandler() {
  return async (event: H3Event): Promise<Buffer | HTTPResponse> => {
    const name = getRouterParam(event, 'file') ?? ''
    const dir = knownAsset(name)
    if (!dir) throw httpError('NOT_FOUND')
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)]!
    return answerAsset(event, await currentAsset(dir, name), type, ['no-cache'])
  }
}

/**
 * The pages' strict policy: the bundle is the one script allowed (by nonce), and what it imports
 * (the code view's chunk) is allowed through it ('strict-dynamic'); styles from 'self' and inline
 * (React Flow and CodeMirror set style attributes and sheets).
 */
function editorPolicy(nonce: string): string {
  return `default-src 'none'; style-src 'self' 'unsafe-inline'; script-src 'nonce-${nonce}' 'strict-dynamic'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`
}

export function editorPageHandler(context: AppContext) {
  return pageRoute(async (event) => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const slug = getRouterParam(event, 'slug') ?? ''
    const access = await projectAccess(context, event, projectId, 'edit')
    if (!access.ok) {
      // Reading is not enough here: the 403 names the roles that may edit.
      if (access.error.code === 'FORBIDDEN') throw httpError('FORBIDDEN', ['Editing flows needs the editor or owner role on this project.'])
      throw access.error
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
${scriptTags(nonce, projectId, slug)}
</body></html>`
    return htmlResponse(200, page.value, { 'cache-control': 'no-store', 'content-security-policy': editorPolicy(nonce), 'referrer-policy': 'same-origin' })
  })
}

/**
 * The bundle, and before it a small script that starts reading the node kinds and the flow file at
 * once, while the bundle loads (editor/src/api.ts picks the answers up). Built outside the tagged
 * template: a bundler rewrites a closing script tag inside one. Ids are JSON-encoded for the script.
 */
function scriptTags(nonce: string, projectId: string, slug: string): SafeHtml {
  const flowUrl = `/api/flows/${encodeURIComponent(projectId)}/${encodeURIComponent(slug)}`
  const preload =
    `var h={headers:{accept:'application/json'}};window.flowctlPreload={kinds:fetch('/api/editor/kinds',h)` +
    (slug ? `,flow:fetch(${inlineJson(flowUrl).value},h)` : '') +
    '};'
  return new SafeHtml(`<script nonce="${nonce}">${preload}</script>\n<script type="module" nonce="${nonce}" src="/edit/_assets/editor.js"></script>`)
}

/** Every registered kind: its description, settings schema, default ports; with the shared `$defs` they point at. */
export function kindsHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    await requireSignedIn(context, event)
    const kinds = [...nodeKinds.values()].map((kind) => ({
      type: kind.type,
      description: kind.description,
      settingsSchema: kind.settingsSchema,
      ports: kind.terminates ? [] : kind.ports(kind.parseSettings({})),
      singlePort: kind.singlePort,
      terminates: kind.terminates === true,
    }))
    return jsonResponse(200, { kinds, defs: SHARED_DEFS }, { 'cache-control': 'no-store' })
  }
}

/**
 * `POST /api/editor/ports` `{ text }` → `{ ports }`: each node's ports as its kind gives them for its
 * settings (a switch's come from its cases), so the canvas draws a handle per port while the text is
 * still being written. The flows API's check route gives the problems of the same text.
 */
export function portsHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    await requireSignedIn(context, event)
    if (isCrossSite(event)) throw httpError('FORBIDDEN', ['cross-site request refused'])
    const raw = await readRequestText(event, PORTS_BODY_LIMIT)
    if (raw === null) throw httpError('BODY_TOO_LARGE')
    return jsonResponse(200, { ports: portsOf(textOf(raw)) }, { 'cache-control': 'no-store' })
  }
}

/** A flow file larger than this is no file one edits in a browser. */
const PORTS_BODY_LIMIT = 4 * 1024 * 1024

/** The editor's own JSON routes answer any caller who may use some project: loopback or a signed-in user. */
async function requireSignedIn(context: AppContext, event: H3Event): Promise<void> {
  const caller = await callerOf(context, event)
  if (caller.kind === 'anonymous') throw httpError('AUTH_REQUIRED', undefined, { headers: { 'www-authenticate': CHALLENGES.bearer } })
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
      // The text being typed, not a loaded node: its settings are typed here, as the loader would.
      ports[node.id] = kind.terminates ? [] : kind.ports(kind.parseSettings(settings))
    } catch {
      ports[node.id] = []
    }
  }
  return ports
}
