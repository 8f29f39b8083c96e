// `/runs/<projectId>/<runId>`: one run — the flow's graph with the path taken highlighted and the
// failed node marked, the facts of the record, the input, each step's output and timing, and a
// Replay button for callers who may run the flow.
import type { Flow, Project } from '../../model/project.js'
import type { StoredRun, StoredTraceStep } from '../../model/store.js'
import { html, type SafeHtml } from '../html.js'
import { renderFlowGraph, runPathOf } from './graph-svg.js'
import { pageResponse, statusBadge, timeTag } from './layout.js'

export interface RunPageData {
  project: Project
  run: StoredRun
  /** The flow's current version, when the project still has it. */
  flow: Flow | undefined
  canRun: boolean
}

export function renderRunPage(data: RunPageData): Response {
  const { project, run, flow } = data
  const projectId = encodeURIComponent(project.settings.projectId)
  const steps = run.trace?.steps ?? []
  const path = runPathOf(steps, run.status === 'error' ? run.failedNodeId : null)
  const graph = flow
    ? html`<div class="graph-wrap">${renderFlowGraph(flow, { title: `Graph of flow ${flow.name} with the path of run ${run.id}`, path })}</div>
<p class="meta">${steps.length ? 'Blue: the path this run took. Faded: nodes it did not reach.' : 'This run kept no trace, so its path cannot be drawn.'}${run.failedNodeId ? ' Red: the node that failed.' : ''} The graph is the flow's current version.</p>`
    : html`<p class="muted">The project no longer has flow ${run.flow}.</p>`
  const body = html`<p class="meta"><a href="/">Dashboard</a> › ${project.settings.name} › <a href="/flows/${projectId}/${encodeURIComponent(run.flow)}">${flow?.name ?? run.flow}</a></p>
<h1>Run <code>${run.id}</code> ${statusBadge(run.status, run.httpStatus)}</h1>
<section>
<div class="two"><dl class="facts">
<dt>Flow</dt><dd><a href="/flows/${projectId}/${encodeURIComponent(run.flow)}">${flow?.name ?? run.flow}</a></dd>
<dt>Started</dt><dd>${timeTag(run.startedAt)}</dd>
<dt>Duration</dt><dd>${run.durationMs} ms</dd>
<dt>Trigger</dt><dd>${run.trigger} (${run.method})</dd>
<dt>Answer</dt><dd>${run.httpStatus ?? '—'}</dd>
${run.replayOf ? html`<dt>Replay of</dt><dd><a href="/runs/${projectId}/${encodeURIComponent(run.replayOf)}"><code>${run.replayOf}</code></a></dd>` : ''}
${run.status === 'error' ? html`<dt>Failed node</dt><dd class="bad"><code>${run.failedNodeId ?? '—'}</code></dd><dt>Reason</dt><dd class="bad">${run.error ?? ''}</dd>` : ''}
<dt>Branches</dt><dd>${run.ports.length ? run.ports.map((p, i) => html`${i ? ', ' : ''}<code>${p.nodeId}</code> → ${p.port}`) : html`<span class="muted">none</span>`}</dd>
</dl>
<div>${replayForm(data)}</div></div>
<h3>Graph</h3>
${graph}
</section>
<div class="two">
<section id="run-input"><h2>Input</h2>${inputHtml(run)}</section>
<section id="run-steps"><h2>Steps${run.trace ? html` <span class="muted">(${steps.length}, ${run.trace.durationMs} ms)</span>` : ''}</h2>
${run.trace ? renderSteps(steps, run.status === 'error' ? run.failedNodeId : null) : html`<p class="muted">Not kept for this run (<code>history.keep</code> in flowctl.yaml).</p>`}
${run.trace?.cut ? html`<p class="banner">Outputs were cut at <code>limits.traceBytes</code>; later steps show a marker instead.</p>` : ''}
</section></div>`
  return pageResponse(200, { title: `Run ${run.id}`, body })
}

function replayForm(data: RunPageData): SafeHtml {
  const { run, project } = data
  if (!data.canRun) return html`<p class="muted">Replaying needs the editor or owner role.</p>`
  if (!run.input) return html`<p class="muted">This run kept no input, so it cannot be replayed.</p>`
  if (run.input.cut) return html`<p class="muted">This run's input was cut when it was stored, so it cannot be replayed.</p>`
  if (!data.flow) return html`<p class="muted">The flow no longer exists, so the run cannot be replayed.</p>`
  const action = `/runs/${encodeURIComponent(project.settings.projectId)}/${encodeURIComponent(run.id)}/replay`
  return html`<form method="post" action="${action}"><button type="submit" id="replay">Replay this run</button></form>
<p class="meta">Sends the same input through the flow's current version; the new run links back here.</p>`
}

function inputHtml(run: StoredRun): SafeHtml {
  if (!run.input) return html`<p class="muted">Not kept for this run (<code>history.keep</code> in flowctl.yaml).</p>`
  const parts: SafeHtml[] = []
  for (const location of ['body', 'path', 'query', 'headers'] as const) {
    const value = run.input[location]
    if (value === undefined) continue
    if (location !== 'body' && Object.keys(value as object).length === 0) continue
    // A form or text body says how it arrived (JSON, the default, says nothing).
    const label = location === 'body' && run.input.bodyType ? `body (${run.input.bodyType})` : location
    parts.push(html`<h3>${label}</h3><pre>${JSON.stringify(value, null, 2)}</pre>`)
  }
  if (run.input.cut) {
    parts.unshift(
      html`<p class="banner">The input was larger than <code>limits.storedInputBytes</code>; only its beginning was kept, and the run cannot be replayed.</p>`,
    )
  }
  return parts.length ? html`${parts}` : html`<p class="muted">No inputs.</p>`
}

export function renderSteps(steps: StoredTraceStep[], failedNodeId: string | null): SafeHtml {
  if (steps.length === 0) return html`<p class="muted">No steps.</p>`
  return html`<ol class="steps">${steps.map((step, index) => {
    const failed = failedNodeId === step.nodeId && index === steps.length - 1
    return html`<li class="${failed ? 'failed' : ''}" data-step="${step.nodeId}"><div class="step-head">${step.name} <span class="muted">(${step.type}, ${step.nodeId})${step.port ? ` → ${step.port}` : ''} · ${step.durationMs} ms${failed ? ' · failed' : ''}</span></div>
<pre>${JSON.stringify(step.output, null, 2)}</pre></li>`
  })}</ol>`
}
