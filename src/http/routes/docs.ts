// `/docs/<projectId>`: Swagger UI served offline from swagger-ui-dist (`/docs/assets/<file>`, a fixed
// list of files, so no path from the request ever reaches the file system). On loopback the page
// carries the document; anyone else is asked for a user token, kept in sessionStorage, and the
// page loads `/api/openapi/<projectId>` with it.
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { getRouterParam, type H3Event, type HTTPResponse } from 'h3'
import type { AppContext } from '../context.js'
import { generateOpenApi } from '../../openapi/generate.js'
import { isLoopbackRequest } from '../access.js'
import { answerAsset, statTag, type HeldAsset } from '../asset-answer.js'
import { requestOrigin } from '../client.js'
import { html, inlineJson, SafeHtml } from '../html.js'
import { httpError } from '../../errors.js'
import { htmlResponse } from '../respond.js'

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
}

let assetDir: string | undefined
/**
 * The build copies the files into dist/swagger-ui/ (scripts/vendor-swagger-ui.mjs), so an installed
 * flowctl needs no swagger-ui-dist and its telemetry postinstall. From the bundle (dist/bin/) or
 * from tsc's output (dist/http/routes/) that folder is one or two levels up; running from src/
 * (tests), swagger-ui-dist, a dev dependency, is read directly.
 */
function swaggerDir(): string {
  if (!assetDir) {
    for (const candidate of ['../swagger-ui/', '../../swagger-ui/']) {
      const dir = fileURLToPath(new URL(candidate, import.meta.url))
      if (existsSync(join(dir, 'swagger-ui-bundle.js'))) return (assetDir = dir)
    }
    const require = createRequire(import.meta.url)
    const getAbsoluteFSPath = require('swagger-ui-dist/absolute-path.js') as () => string
    assetDir = getAbsoluteFSPath()
  }
  return assetDir
}

/** Each file once asked for, kept for the process's life; browsers keep it an hour, then revalidate (304). */
const assetCache = new Map<string, HeldAsset>()

async function heldAsset(name: string): Promise<HeldAsset> {
  let asset = assetCache.get(name)
  if (!asset) {
    const path = join(swaggerDir(), name)
    const stats = await stat(path)
    asset = { content: await readFile(path), etag: statTag(stats) }
    assetCache.set(name, asset)
  }
  return asset
}

export function docsAssetHandler() {
  return async (event: H3Event): Promise<Buffer | HTTPResponse> => {
    const name = getRouterParam(event, 'file') ?? ''
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined
    if (!type) throw httpError('NOT_FOUND')
    return answerAsset(event, await heldAsset(name), type, ['public', 'max-age=3600'])
  }
}

/** The browser side: ask for a token once per tab, fetch the document with it, start Swagger UI. */
const PAGE_SCRIPT = `
(function () {
  var projectId = document.body.getAttribute('data-project');
  var key = 'flowctl-token';
  var status = document.getElementById('token-status');
  var embedded = document.getElementById('openapi-document');
  function start(spec) {
    window.SwaggerUIBundle({ spec: spec, dom_id: '#swagger-ui', deepLinking: true,
      presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIStandalonePreset], layout: 'BaseLayout' });
  }
  if (embedded) {
    // A loopback request: the server put the document in the page, no token needed.
    status.textContent = 'Local request: no token needed. ';
    document.getElementById('sign-out').hidden = true;
    start(JSON.parse(embedded.textContent));
    return;
  }
  function load() {
    var token = sessionStorage.getItem(key);
    if (!token) {
      token = window.prompt('User token for project ' + projectId + ' (from "flowctl users add"):') || '';
      if (token) sessionStorage.setItem(key, token);
    }
    fetch('/api/openapi/' + encodeURIComponent(projectId), { headers: token ? { Authorization: 'Bearer ' + token } : {} })
      .then(function (res) {
        if (!res.ok) {
          if (res.status === 401) sessionStorage.removeItem(key);
          status.textContent = 'Could not load the API document (HTTP ' + res.status + '). ';
          return null;
        }
        status.textContent = '';
        return res.json();
      })
      .then(function (spec) {
        if (!spec) return;
        start(spec);
      })
      .catch(function () { status.textContent = 'Could not load the API document. '; });
  }
  document.getElementById('sign-out').addEventListener('click', function () { sessionStorage.removeItem(key); load(); });
  load();
})();
`

/**
 * The page's scripts, each carrying this response's nonce: the CSP below lets only them run. Constants
 * written here, not user input: inserted as they are. Kept out of the tagged template below because
 * a bundler rewrites `</script` inside tagged templates with a runtime helper.
 */
function pageScripts(nonce: string): SafeHtml {
  return new SafeHtml(`<script nonce="${nonce}" src="/docs/assets/swagger-ui-bundle.js"></script>
<script nonce="${nonce}" src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script nonce="${nonce}">${PAGE_SCRIPT}</script>`)
}

/**
 * The strict policy of the other pages (SPEC §19), plus what Swagger UI needs from this server: its
 * stylesheet and images ('self'); scripts only by nonce; "Try it out" calls the same origin
 * (connect-src 'self'). Inline styles stay allowed, as on the other pages (Swagger UI sets style attributes).
 */
function docsPolicy(nonce: string): string {
  return `default-src 'none'; style-src 'self' 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`
}

/**
 * On loopback (SPEC §14) the page carries the document itself, so no token is asked for;
 * `/api/openapi` keeps §5.2's sign-in rules for every caller. A JSON data block is never run, so
 * the CSP needs nothing for it.
 */
function embeddedDocument(document: unknown): SafeHtml {
  return new SafeHtml(`<script type="application/json" id="openapi-document">${inlineJson(document).value}</script>`)
}

export function docsPageHandler(context: AppContext) {
  return (event: H3Event): Response => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const entry = context.workspace.get(projectId)
    if (!entry) throw httpError('PROJECT_NOT_FOUND')
    const embedded = isLoopbackRequest(context, event)
      ? embeddedDocument(generateOpenApi(entry.project, { serverUrl: requestOrigin(event, context.options) }))
      : new SafeHtml('')
    const nonce = randomBytes(12).toString('base64')
    const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${entry.project.settings.name} — API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<style>body{margin:0;font-family:system-ui,sans-serif}#bar{padding:8px 16px;background:#1d232a;color:#fff;font-size:14px}
#bar button{margin-left:8px}#bar a{color:#fff}</style></head>
<body data-project="${projectId}">
<div id="bar"><a href="/">← Dashboard</a> · <span id="token-status"></span><button id="sign-out" type="button">Change token</button></div>
<div id="swagger-ui"></div>
${embedded}
${pageScripts(nonce)}
</body></html>`
    return htmlResponse(200, page.value, { 'cache-control': 'no-store', 'content-security-policy': docsPolicy(nonce), 'referrer-policy': 'same-origin' })
  }
}
