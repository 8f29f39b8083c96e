// `/runs/<projectId>/<runId>`: one run — the flow's graph with the path taken highlighted and the
// failed node marked, the facts of the record, the input, each step's output and timing, and a
// Replay button for callers who may run the flow.
import type { Flow, Project } from '../../model/project.js'
import type { RunRecord, StoredRun, StoredTraceStep } from '../../model/store.js'
import { failedHttpOf } from '../../flow/failed-http.js'
import type { WaitingFacts } from '../../flow/park.js'
import { whyNotResumable } from '../../flow/resume-from.js'
import { html, type SafeHtml } from '../html.js'
import { renderFlowGraph, runPathOf } from './graph-svg.js'
import { pageResponse, statusBadge, timeTag } from './layout.js'

export interface RunPageData {
  project: Project
  run: StoredRun
  /** The flow's current version, when the project still has it. */
  flow: Flow | undefined
  canRun: boolean
  /** Runs that replayed or retried this one, newest first. */
  replays: RunRecord[]
  /** A parked run: how it waits (SPEC §22). */
  waiting?: WaitingFacts | null
}

export function renderRunPage(data: RunPageData): Response {
  const { project, run, flow } = data
  const projectId = encodeURIComponent(project.settings.projectId)
  const steps = run.trace?.steps ?? []
  const path = runPathOf(steps, run.status === 'error' ? run.failedNodeId : null)
  const graph = flow
    ? html`<div class="graph-wrap">${renderFlowGraph(flow, { title: `Graph of flow ${flow.name} with the path of run ${run.id}`, path, projectId: project.settings.projectId })}</div>
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
${run.replayOf ? html`<dt>${run.resumedFrom ? 'Retry of' : 'Replay of'}</dt><dd><a href="/runs/${projectId}/${encodeURIComponent(run.replayOf)}" id="replay-of"><code>${run.replayOf}</code></a></dd>` : ''}
${run.resumedFrom ? html`<dt>Resumed from</dt><dd id="resumed-from">node <code>${run.resumedFrom}</code> <span class="muted">(the steps before it reused, not run again)</span></dd>` : ''}
${laterRuns(data.replays, projectId)}
${run.status === 'error' ? html`<dt>Failed node</dt><dd class="bad"><code>${run.failedNodeId ?? '—'}</code></dd><dt>Reason</dt><dd class="bad">${run.error ?? ''}</dd>${failedHttpFacts(run)}` : ''}
${data.waiting ? waitingFact(data.waiting) : ''}
<dt>Branches</dt><dd>${run.ports.length ? run.ports.map((p, i) => html`${i ? ', ' : ''}<code>${p.nodeId}</code> → ${p.port}`) : html`<span class="muted">none</span>`}</dd>
</dl>
<div>${replayForm(data)}</div></div>
<h3>Graph</h3>
${graph}
</section>
<div class="two">
<section id="run-input"><h2>Input</h2>${inputHtml(run)}</section>
<section id="run-steps"><h2>Steps${run.trace ? html` <span class="muted">(${steps.length}, ${run.trace.durationMs} ms)</span>` : ''}</h2>
${run.trace ? renderSteps(steps, run.status === 'error' ? run.failedNodeId : null, project.settings.projectId) : html`<p class="muted">Not kept for this run (<code>history.keep</code> in flowctl.yaml).</p>`}
${run.trace?.cut ? html`<p class="banner">Outputs were cut at <code>limits.traceBytes</code>; later steps show a marker instead.</p>` : ''}
</section></div>`
  return pageResponse(200, { title: `Run ${run.id}`, body })
}

/**
 * The runs made from this one, newest first, in two lists: retries from the failed node (they have
 * `resumedFrom`, and reused this run's earlier steps) and replays of the whole input.
 */
function laterRuns(runs: RunRecord[], projectId: string): SafeHtml {
  const links = (list: RunRecord[]) =>
    list.map(
      (r, i) => html`${i ? ', ' : ''}<a href="/runs/${projectId}/${encodeURIComponent(r.id)}"><code>${r.id}</code></a> ${statusBadge(r.status, r.httpStatus)}`,
    )
  const retries = runs.filter((r) => r.resumedFrom)
  const replays = runs.filter((r) => !r.resumedFrom)
  return html`${retries.length ? html`<dt>Retried by</dt><dd id="retries">${links(retries)}</dd>` : ''}
${replays.length ? html`<dt>Replayed by</dt><dd id="replays">${links(replays)}</dd>` : ''}`
}

function waitingFact(waiting: WaitingFacts): SafeHtml {
  const what = waiting.kind === 'callback' ? 'for a callback, until' : 'sleeping until'
  const link = waiting.resumeUrl ? html` · <a id="resume-link" href="${waiting.resumeUrl}">approval page (resume link)</a>` : ''
  return html`<dt>Waiting</dt><dd id="waiting">${what} ${timeTag(waiting.dueAt)}${link}</dd>`
}

function replayForm(data: RunPageData): SafeHtml {
  const { run, project } = data
  if (!data.canRun) return html`<p class="muted">Replaying needs the editor or owner role.</p>`
  if (!run.input) return html`<p class="muted">This run kept no input, so it cannot be replayed.</p>`
  if (run.input.cut) return html`<p class="muted">This run's input was cut when it was stored, so it cannot be replayed.</p>`
  if (!data.flow) return html`<p class="muted">The flow no longer exists, so the run cannot be replayed.</p>`
  const action = `/runs/${encodeURIComponent(project.settings.projectId)}/${encodeURIComponent(run.id)}/replay`
  return html`<form method="post" action="${action}"><button type="submit" id="replay">Replay this run</button></form>
<p class="meta">Sends the same input through the flow's current version; the new run links back here.</p>
${retryForm(run, data.flow, action)}`
}

/** The "Retry from failed node" button: a failed run with a stored trace whose steps can be reused (resume-from.ts). */
function retryForm(run: StoredRun, flow: Flow, action: string): SafeHtml | string {
  if (run.status !== 'error' || !run.trace || !run.failedNodeId) return ''
  const why = whyNotResumable(run, flow)
  if (why) return html`<p class="muted" id="retry-unavailable">Retry from the failed node is not possible: ${why}.</p>`
  return html`<form method="post" action="${action}?from=failed"><button type="submit" id="retry-failed">Retry from failed node</button></form>
<p class="meta">Reuses the stored outputs of the steps before node <code>${run.failedNodeId}</code> (no http call or insert is repeated) and runs the flow's current version from it.</p>`
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

/** The http call a run failed on (SPEC §21): method, URL, status and the first 2 KiB of the answer. */
function failedHttpFacts(run: StoredRun): SafeHtml | string {
  const failed = failedHttpOf(run.trace, run.failedNodeId)
  if (!failed) return ''
  const { http } = failed
  const where = failed.flow ? html` <span class="muted">(node <code>${failed.nodeId}</code> of flow ${failed.flow})</span>` : ''
  return html`<dt>HTTP call</dt><dd id="failed-http"><code>${http.method} ${http.url}</code>${where}</dd>
<dt>Its answer</dt><dd>${http.status === null ? html`<span class="muted">none (no answer came)</span>` : html`<span class="badge bad">${http.status}</span>`}</dd>
${http.body === null ? '' : html`<dt>Answer body</dt><dd><pre id="failed-http-body">${http.body || '(empty)'}</pre><span class="meta">the first 2 KiB</span></dd>`}`
}

/** Sub-flow runs shown under one step; an each over many items lists the first ones. */
const CALLS_SHOWN = 50

/**
 * The steps of a trace. A step is marked failed when it is the failed node's last step; attempts of
 * a node with retry are numbered; the steps of each sub-flow a call or each ran are nested under it.
 */
export function renderSteps(steps: StoredTraceStep[], failedNodeId: string | null, projectId: string): SafeHtml {
  if (steps.length === 0) return html`<p class="muted">No steps.</p>`
  return html`<ol class="steps">${steps.map((step, index) => {
    const failed = failedNodeId === step.nodeId && index === steps.length - 1
    const next = steps[index + 1]
    const triedAgain = step.attempt !== undefined && next?.nodeId === step.nodeId && next.attempt === step.attempt + 1
    return stepItem(step, { failed, triedAgain, projectId })
  })}</ol>`
}

function stepItem(step: StoredTraceStep, facts: { failed: boolean; triedAgain: boolean; projectId: string }): SafeHtml {
  const { failed, triedAgain } = facts
  const attempt = step.attempt === undefined ? '' : html` <span class="badge ${triedAgain ? 'warn' : 'info'}">attempt ${step.attempt}</span>`
  const outcome = failed ? ' · failed' : triedAgain ? ' · tried again' : step.reused ? ' · reused from the failed run' : ''
  return html`<li class="${failed ? 'failed' : ''}" data-step="${step.nodeId}"${step.attempt === undefined ? '' : html` data-attempt="${step.attempt}"`}><div class="step-head">${step.name}${attempt} <span class="muted">(${step.type}, ${step.nodeId})${step.port ? ` → ${step.port}` : ''} · ${step.durationMs} ms${outcome}</span></div>
<pre>${JSON.stringify(step.output, null, 2)}</pre>${step.calls ? subFlowSteps(step.calls, facts.projectId) : ''}</li>`
}

/** Each sub-flow run of a call or each step, its steps nested (a failed one marks its last step). */
function subFlowSteps(calls: NonNullable<StoredTraceStep['calls']>, projectId: string): SafeHtml {
  const shown = calls.slice(0, CALLS_SHOWN)
  return html`<div class="calls">${shown.map((call, index) => {
    const last = call.steps.at(-1)
    const failedId = last && last.port === null && isFailureOutput(last.output) ? last.nodeId : null
    const label = calls.length > 1 ? `call ${index + 1} of ${calls.length}: ` : ''
    // Open when there are few, and always where one failed.
    const open = calls.length <= 3 || failedId !== null
    return html`<details class="sub-flow"${open ? html` open` : ''}><summary>${label}flow <a href="/flows/${encodeURIComponent(projectId)}/${encodeURIComponent(call.flow)}">${call.flow}</a> <span class="muted">(${call.steps.length} step${call.steps.length === 1 ? '' : 's'}${failedId ? ', failed' : ''})</span></summary>
${renderSteps(call.steps, failedId, projectId)}</details>`
  })}${calls.length > shown.length ? html`<p class="muted">… and ${calls.length - shown.length} more calls</p>` : ''}</div>`
}

function isFailureOutput(output: unknown): boolean {
  return typeof output === 'object' && output !== null && typeof (output as { error?: unknown }).error === 'string'
}
