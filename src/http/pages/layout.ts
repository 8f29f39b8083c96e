// The shell of the pages of SPEC §14 (`/`, `/flows/...`, `/runs/...`): inline CSS in the style of
// /status, a header with navigation, and one small inline script (allowed by a per-response nonce)
// that shows times in the browser's zone and follows `/api/events` to update run lists live.
// Without JavaScript every page still reads and every form still posts; times show in UTC.
import { randomBytes } from 'node:crypto'
import { html, SafeHtml } from '../html.js'
import { htmlResponse } from '../respond.js'
import { GRAPH_CSS } from './graph-svg.js'
import { LIVE_SCRIPT } from './live-script.js'

const STYLE = new SafeHtml(`
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#f5f6f8}
header.top{background:#1d232a;color:#fff;padding:10px 24px;display:flex;gap:18px;align-items:center;flex-wrap:wrap}
header.top a{color:#fff;text-decoration:none}header.top a.brand{font-weight:700;font-size:1.1em}
header.top nav{display:flex;gap:14px;font-size:.95em}header.top .live{margin-left:auto;font-size:.85em;color:#c9d1da}
main{max-width:1180px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:1.55em;margin:4px 0 4px}h2{margin:0 0 10px;font-size:1.25em}h3{font-size:1.02em;margin:18px 0 6px}
section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:16px 20px;margin:16px 0}
table{border-collapse:collapse;width:100%;font-size:.92em}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eceef1;vertical-align:top}
th{color:#5b6570;font-weight:600}code,pre,textarea.json{font:13px/1.4 ui-monospace,Menlo,Consolas,monospace}
pre{background:#f6f8fa;border:1px solid #e3e7ec;border-radius:6px;padding:8px 10px;margin:4px 0;overflow:auto;max-height:320px;white-space:pre-wrap;word-break:break-word}
a{color:#1f5fae}.ok{color:#137333;font-weight:600}.bad{color:#b3261e;font-weight:600}.muted{color:#6b7580}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:.85em;font-weight:600;white-space:nowrap}
.badge.ok{background:#e6f4ea}.badge.bad{background:#fce8e6}.badge.info{background:#e8eefb;color:#1f4e9a}.badge.warn{background:#fdf0d5;color:#8a5a00}
details.sub-flow{margin:6px 0 0 4px;padding:2px 0 0 10px;border-left:3px solid #d5dbe3}details.sub-flow summary{cursor:pointer;font-size:.92em;color:#4a5561}
ul.problems{margin:4px 0;padding-left:20px;color:#b3261e}ul.problems li.warn{color:#8a5a00}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:14px}
.card{border:1px solid #dde1e6;border-radius:8px;padding:10px 12px;background:#fcfcfd;display:flex;flex-direction:column;gap:6px}
.card h3{margin:0;font-size:1em}.card .pic{background:#fff;border:1px solid #eef0f3;border-radius:6px;padding:4px}
.meta{font-size:.88em;color:#4a5561}.meta code{font-size:12px}
.banner{background:#fff8e1;border:1px solid #f0d58c;border-radius:6px;padding:8px 12px;margin:10px 0}
.graph-wrap{overflow:auto;border:1px solid #eef0f3;border-radius:6px;padding:6px;background:#fff}
form.run-form label{display:block;font-weight:600;margin:10px 0 3px}form.run-form .hint{font-weight:400;color:#6b7580;font-size:.88em}
form.run-form input[type=text]{width:100%;max-width:420px;padding:5px 8px;border:1px solid #c5ccd5;border-radius:5px;font:inherit}
textarea.json{width:100%;min-height:150px;padding:8px;border:1px solid #c5ccd5;border-radius:5px}
button,.button{font:inherit;padding:6px 16px;border-radius:6px;border:1px solid #1f5fae;background:#1f5fae;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary{background:#fff;color:#1f5fae}
.json-state{font-size:.85em;margin-left:8px}
.two{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px}@media (max-width:800px){.two{grid-template-columns:1fr}}
ol.steps{padding-left:22px;margin:6px 0}ol.steps li{margin:0 0 10px}ol.steps li.failed>.step-head{color:#b3261e}
.step-head{font-weight:600}.step-head .muted{font-weight:400}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}dl.facts dt{color:#5b6570}dl.facts dd{margin:0}
tr.fresh{animation:fresh 2.5s ease-out}@keyframes fresh{from{background:#fff3bf}to{background:transparent}}
${GRAPH_CSS}
`)

export interface PageOptions {
  title: string
  body: SafeHtml
}

/** A full page; the nonce lets exactly this response's inline script run. */
export function pageResponse(status: number, options: PageOptions): Response {
  const nonce = randomBytes(12).toString('base64')
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · flowctl</title><link rel="icon" href="data:,"><style>${STYLE}</style></head>
<body>
<header class="top"><a class="brand" href="/">flowctl</a><nav><a href="/">Dashboard</a><a href="/status">Status</a><a href="/sign-in">Sign in</a></nav><span class="live" id="live-state" title="Live updates from /api/events"></span></header>
<main>
${options.body}
</main>
${scriptTag(nonce)}
</body></html>`
  return htmlResponse(status, page.value, {
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'referrer-policy': 'same-origin',
  })
}

// Built outside the tagged templates: a bundler rewrites a closing script tag inside one.
function scriptTag(nonce: string): SafeHtml {
  return new SafeHtml(`<script nonce="${nonce}">${LIVE_SCRIPT}</script>`)
}

/** A time: UTC text on the server, the browser's local time and zone once the script runs. */
export function timeTag(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`<span class="muted">—</span>`
  return html`<time datetime="${iso}">${iso
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC')
    .replace(/Z$/, ' UTC')}</time>`
}

export function statusBadge(status: string, httpStatus: number | null): SafeHtml {
  // A run whose End answered 4xx or 5xx ran as designed, but its caller was refused: amber, not green.
  if (status === 'success' && httpStatus !== null && httpStatus >= 400) return html`<span class="badge warn">answered ${httpStatus}</span>`
  // A skipped run (SPEC §12, concurrency limit) is neither good nor bad news: a plain badge.
  // A waiting run (SPEC §22) is parked, not failed: blue, like other news in progress.
  const tone = status === 'success' ? 'ok' : status === 'skipped' ? 'muted' : status === 'waiting' ? 'info' : 'bad'
  return html`<span class="badge ${tone}">${status}${httpStatus !== null ? ` ${httpStatus}` : ''}</span>`
}
