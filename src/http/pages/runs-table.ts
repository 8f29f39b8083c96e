// The run list of the dashboard and the flow page. Rows added live by the page script (on each
// `run` event of /api/events) have the same cells, built there with textContent, never markup; a
// row names its run (`data-run`), so a parked run's final record replaces its `waiting` row.
import type { RunRecord } from '../../model/store.js'
import { html, type SafeHtml } from '../html.js'
import { statusBadge, timeTag } from './layout.js'

export function runsTable(runs: RunRecord[], scope: { projectId: string; flow?: string; showFlow: boolean }): SafeHtml {
  return html`<table class="runs"><thead><tr><th>started</th>${scope.showFlow ? html`<th>flow</th>` : ''}<th>trigger</th><th>status</th><th>ms</th><th>run</th><th>failed node: reason</th></tr></thead>
<tbody data-runs="${scope.projectId}" data-flow="${scope.flow ?? ''}" data-show-flow="${scope.showFlow ? '1' : ''}">
${runs.map((run) => runRow(run, scope.showFlow))}
${runs.length === 0 ? html`<tr class="empty"><td colspan="7" class="muted">no runs yet</td></tr>` : ''}
</tbody></table>`
}

function runRow(run: RunRecord, showFlow: boolean): SafeHtml {
  const project = encodeURIComponent(run.projectId)
  return html`<tr data-run="${run.id}"><td>${timeTag(run.startedAt)}</td>
${showFlow ? html`<td><a href="/flows/${project}/${encodeURIComponent(run.flow)}">${run.flow}</a></td>` : ''}
<td>${run.trigger} <span class="muted">${run.method}</span>${run.replayOf ? html` <span class="badge info">${run.resumedFrom ? 'retry' : 'replay'}</span>` : ''}</td>
<td>${statusBadge(run.status, run.httpStatus)}</td><td>${run.durationMs}</td>
<td><a href="/runs/${project}/${encodeURIComponent(run.id)}"><code>${run.id}</code></a></td>
<td>${run.failedNodeId ? html`<code>${run.failedNodeId}</code>: ` : ''}${run.error ?? ''}</td></tr>`
}
