// The /status page: plain HTML with inline CSS only (no external assets), every value escaped.
import { html, SafeHtml } from './html.js'
import type { ProjectStatus, StatusView } from './status-data.js'
import type { RunRecord } from '../model/store.js'
import { formatInZone } from '../language/cron.js'

const STYLE = new SafeHtml(`
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#f5f6f8}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:1.6em;margin:0 0 4px}h2{margin:32px 0 8px;font-size:1.3em}h3{font-size:1.05em;margin:20px 0 6px}
section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:16px 20px;margin:16px 0}
table{border-collapse:collapse;width:100%;font-size:.92em}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eceef1;vertical-align:top}
th{color:#5b6570;font-weight:600}code{font:13px/1.4 ui-monospace,Menlo,Consolas,monospace}
.ok{color:#137333;font-weight:600}.bad{color:#b3261e;font-weight:600}.muted{color:#6b7580}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:.85em;font-weight:600}
.badge.ok{background:#e6f4ea}.badge.bad{background:#fce8e6}.badge.warn{background:#fdf0d5;color:#8a5a00}
ul.problems{margin:4px 0;padding-left:20px;color:#b3261e}
`)

function badge(ok: boolean, yes: string, no: string): SafeHtml {
  return ok ? html`<span class="badge ok">${yes}</span>` : html`<span class="badge bad">${no}</span>`
}

/** As the dashboard's badge: an End that answered 4xx or 5xx is amber, not a green success. */
function runBadge(run: RunRecord): SafeHtml {
  if (run.status === 'skipped') return html`<span class="badge">skipped</span>`
  if (run.status === 'success' && run.httpStatus !== null && run.httpStatus >= 400) return html`<span class="badge warn">answered ${run.httpStatus}</span>`
  return badge(run.status === 'success', 'success', 'error')
}

/** A scheduled run's minute in UTC, and in its schedule's zone when that is another one. */
function scheduledFor(run: RunRecord, zoneOf: (flow: string) => string | undefined): SafeHtml | string {
  if (!run.scheduledFor) return ''
  const utc = `${run.scheduledFor.slice(0, 16).replace('T', ' ')} UTC`
  const zone = zoneOf(run.flow)
  if (!zone || zone === 'UTC') return utc
  return html`${utc}<br><span class="muted">${formatInZone(new Date(run.scheduledFor), zone)}</span>`
}

function runsTable(runs: RunRecord[], zoneOf: (flow: string) => string | undefined): SafeHtml {
  if (runs.length === 0) return html`<p class="muted">none</p>`
  return html`<table><tr><th>started</th><th>scheduled for</th><th>flow</th><th>method</th><th>status</th><th>HTTP</th><th>ms</th><th>run id</th><th>error</th></tr>
${runs.map(
  (run) => html`<tr><td>${run.startedAt}</td><td>${scheduledFor(run, zoneOf)}</td><td>${run.flow}</td><td>${run.method}</td><td>${runBadge(run)}</td>
<td>${run.httpStatus ?? ''}</td><td>${run.durationMs}</td><td><code>${run.id}</code></td><td>${run.failedNodeId ? `${run.failedNodeId}: ` : ''}${run.error ?? ''}</td></tr>`,
)}</table>`
}

function reasonList(reasons: string[]): SafeHtml | string {
  return reasons.length ? html`<ul class="problems reasons">${reasons.map((r) => html`<li>${r}</li>`)}</ul>` : ''
}

function projectSection(project: ProjectStatus): SafeHtml {
  const rejected = Object.entries(project.rejected)
  const zones = new Map(project.schedules.map((s) => [s.flow, s.timezone]))
  const zoneOf = (flow: string) => zones.get(flow)
  return html`<section>
<h2>${project.name} <code class="muted">${project.projectId}</code> ${badge(project.ok, 'healthy', 'needs attention')}</h2>
${reasonList(project.reasons)}
<p>Store: ${project.store.kind ?? 'not open'} ${badge(project.store.ok, 'available', 'unavailable')}
${project.store.error ? html`<span class="bad">${project.store.error}</span>` : ''}
· Scheduler heartbeat: ${project.heartbeat.at ?? 'never'} ${badge(!project.heartbeat.stale, 'fresh', 'stale')}
· <a href="/docs/${encodeURIComponent(project.projectId)}">API reference</a></p>
<h3>Load problems</h3>
${project.problems.length ? html`<ul class="problems">${project.problems.map((p) => html`<li><code>${p}</code></li>`)}</ul>` : html`<p class="muted">none</p>`}
<h3>Flows</h3>
<table><tr><th>flow</th><th>file</th><th>route</th></tr>
${project.flows.map(
  (f) => html`<tr><td>${f.name} <span class="muted">(${f.slug})</span></td><td><code>${f.file}</code></td>
<td>${f.method ? html`<code>${f.method} ${f.path}</code>` : html`<span class="muted">${f.start ? 'none (http: false)' : 'no Start node'}</span>`}</td></tr>`,
)}</table>
<h3>Schedules</h3>
${
  project.schedules.length
    ? html`<table><tr><th>flow</th><th>cron</th><th>timezone</th><th>enabled</th><th>catch-up</th><th>next run (UTC)</th><th>next run (its zone)</th></tr>
${project.schedules.map(
  (s) => html`<tr><td>${s.flow}</td><td><code>${s.cron}</code></td><td>${s.timezone}</td><td>${s.enabled ? 'yes' : 'no'}</td>
<td>${s.catchUp === 'none' ? 'none' : `${s.catchUp}, ${s.catchUpMinutes} min`}</td><td>${s.nextRun ?? '—'}</td><td>${s.nextRunLocal ?? '—'}</td></tr>`,
)}</table>`
    : html`<p class="muted">none</p>`
}
<h3>Rejected requests</h3>
${rejected.length ? html`<p>${rejected.map(([status, n], i) => html`${i ? ', ' : ''}<code>${status}</code>: ${n}`)}</p>` : html`<p class="muted">none</p>`}
<h3>Recent failures</h3>
${runsTable(project.recentFailures, zoneOf)}
<h3>Recent runs</h3>
${runsTable(project.recentRuns, zoneOf)}
</section>`
}

export function renderStatusPage(view: StatusView): string {
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="15"><title>flowctl status</title><style>${STYLE}</style></head>
<body><main>
<h1>flowctl status ${badge(view.ok, 'ok', 'degraded')}</h1>
${reasonList(view.reasons)}
<p>Scheduler heartbeat: ${view.heartbeat.at ?? 'never'} ${badge(!view.heartbeat.stale, 'fresh', 'stale')}
<span class="muted">(stale when older than two minutes)</span></p>
${view.projects ? view.projects.map(projectSection) : html`<p class="muted">Details are shown to local requests and to signed-in users.</p>`}
${
  view.rejectedUnknownProject && Object.keys(view.rejectedUnknownProject).length
    ? html`<section><h3>Rejected requests for unknown projects</h3><p>${Object.entries(view.rejectedUnknownProject).map(([s, n], i) => html`${i ? ', ' : ''}<code>${s}</code>: ${n}`)}</p></section>`
    : ''
}
</main></body></html>`
  return page.value
}
