// `/`: every project the caller may read — its flows with a small picture of each graph, its
// schedules, the last runs (updated live) and its load problems.
import type { Project } from '../../model/project.js'
import { html, type SafeHtml } from '../html.js'
import type { ProjectStatus, StatusView } from '../status-data.js'
import { renderFlowGraph } from './graph-svg.js'
import { pageResponse, statusBadge, timeTag } from './layout.js'
import { runsTable } from './runs-table.js'

/** How many runs /status and the dashboard list per project (status-data.ts). */
const RECENT_RUNS_SHOWN = 10

export interface DashboardCaller {
  signedIn: boolean
  /** The projects whose flow files the caller may edit (loopback, editor, owner): only these get edit links. */
  editable: ReadonlySet<string>
}

export function renderDashboard(view: StatusView, projects: Map<string, Project>, caller: DashboardCaller): Response {
  const { signedIn } = caller
  const sections = view.projects ?? []
  const body = html`<h1>Dashboard</h1>
<p class="muted">Every flow of every project this server runs. Click a flow to see its graph and run it; click a run to inspect its steps.</p>
<div id="reload-banner" class="banner" hidden data-live><span></span><a href="">Refresh the page</a></div>
${sections.length === 0 ? html`<section><p>${signedIn ? 'Your user has no role on any project of this server.' : html`<a href="/sign-in">Sign in</a> with a user token (from <code>flowctl users add</code>) to see projects, or open this page on the server's own machine (localhost). API clients send <code>Authorization: Bearer &lt;user token&gt;</code>.`}</p></section>` : ''}
${sections.map((status) => projectSection(status, projects.get(status.projectId), caller.editable.has(status.projectId)))}`
  return pageResponse(200, { title: 'Dashboard', body })
}

function projectSection(status: ProjectStatus, project: Project | undefined, canEdit: boolean): SafeHtml {
  const projectId = encodeURIComponent(status.projectId)
  const lastRuns = new Map<string, (typeof status.recentRuns)[number]>()
  for (const run of status.recentRuns) if (!lastRuns.has(run.flow)) lastRuns.set(run.flow, run)
  return html`<section>
<h2>${status.name} <code class="muted">${status.projectId}</code> <span class="badge ${status.ok ? 'ok' : 'bad'}">${status.ok ? 'healthy' : 'needs attention'}</span>
<span class="meta"> · <a href="/docs/${projectId}">API reference</a>${canEdit ? html` · <a href="/edit/${projectId}">New flow</a>` : ''}</span></h2>
${status.store.error ? html`<p class="bad">Store unavailable: ${status.store.error}</p>` : ''}
${status.problems.length ? html`<h3>Problems and warnings</h3><ul class="problems">${status.problems.map((p) => html`<li class="${p.includes(': warning: ') ? 'warn' : ''}"><code>${p}</code></li>`)}</ul>` : ''}
<h3>Flows</h3>
<div class="cards">
${status.flows.map((flow) => {
  const model = project?.flows.get(flow.slug)
  const last = lastRuns.get(flow.slug)
  const schedule = model?.schedule
  return html`<div class="card" data-flow-card="${flow.slug}">
<h3><a href="/flows/${projectId}/${encodeURIComponent(flow.slug)}">${flow.name}</a>${canEdit ? html` <a class="meta" href="/edit/${projectId}/${encodeURIComponent(flow.slug)}">edit</a>` : ''}</h3>
<div class="pic">${model ? renderFlowGraph(model, { thumbnail: true, title: `Graph of flow ${flow.name}` }) : ''}</div>
<div class="meta">${model?.start && !model.start.http ? html`<span class="muted">no HTTP route (<code>http: false</code>)</span>` : flow.method ? html`<code>${flow.method} ${flow.path}</code>` : html`<span class="muted">no Start node: not callable over HTTP</span>`}</div>
${schedule ? html`<div class="meta">schedule <code>${schedule.cron}</code> ${schedule.timezone}${schedule.enabled ? '' : ' (disabled)'}</div>` : ''}
<div class="meta">last run: <span data-last-run="${status.projectId}/${flow.slug}">${last ? html`${statusBadge(last.status, last.httpStatus)} <a href="/runs/${projectId}/${encodeURIComponent(last.id)}">${timeTag(last.startedAt)}</a>` : html`<span class="muted">${status.recentRuns.length < RECENT_RUNS_SHOWN ? 'never' : `not among the last ${RECENT_RUNS_SHOWN} runs`}</span>`}</span></div>
</div>`
})}
</div>
<h3>Schedules</h3>
${
  status.schedules.length
    ? html`<table><tr><th>flow</th><th>cron</th><th>timezone</th><th>enabled</th><th>next run</th></tr>
${status.schedules.map((s) => html`<tr><td><a href="/flows/${projectId}/${encodeURIComponent(s.flow)}">${s.flow}</a></td><td><code>${s.cron}</code></td><td>${s.timezone}</td><td>${s.enabled ? 'yes' : 'no'}</td><td>${timeTag(s.nextRun)}</td></tr>`)}</table>`
    : html`<p class="muted">none</p>`
}
<h3>Last runs</h3>
${runsTable(status.recentRuns, { projectId: status.projectId, showFlow: true })}
</section>`
}
