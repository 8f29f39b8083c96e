// The approval page (SPEC §22): what `GET {{ run.resumeUrl }}` shows a person asked to decide — the
// run's input and its steps so far (as stored: secrets `***`), and Approve / Reject buttons that post
// `{ approved: true | false, comment }` to the same URL. A plain form, so it works without
// JavaScript; the token in the URL is the permission, so no sign-in is asked.
import { httpError, type ErrorCode } from '../../errors.js'
import type { Project } from '../../model/project.js'
import type { StoredRun } from '../../model/store.js'
import type { ParkedRunInfo } from '../../model/waits.js'
import { html, type SafeHtml } from '../html.js'
import { errorPage } from './error-page.js'
import { pageResponse, statusBadge, timeTag } from './layout.js'
import { renderSteps } from './run-page.js'

export interface ApprovalPageData {
  project: Project
  runId: string
  run: StoredRun | null
  /** The parked row when the token is good for the wait the run is at now; null otherwise. */
  check: ParkedRunInfo | null
  /** Why the buttons are not offered (a bad token, a wait answered already or past its timeout). */
  refusal: ErrorCode | null
}

export function renderApprovalPage(data: ApprovalPageData): Response {
  const { project, run, check, refusal } = data
  if (refusal === 'AUTH_REQUIRED' || !run) {
    return errorPage(httpError('AUTH_REQUIRED', ['The link is incomplete or not for this run. Ask for a new one.']), 'This link is not valid')
  }
  const projectId = project.settings.projectId
  const steps = run.trace?.steps ?? []
  const flowName = project.flows.get(run.flow)?.name ?? run.flow
  const body = html`<h1>Approval: ${flowName}</h1>
<p class="meta">Run <code>${run.id}</code> of project <code>${projectId}</code>, started ${timeTag(run.startedAt)} ${statusBadge(run.status, run.httpStatus)}</p>
${check ? decisionForm(check) : closedNotice(refusal)}
<div class="two">
<section id="approval-input"><h2>Input</h2>${run.input ? html`<pre>${JSON.stringify(run.input.body ?? null, null, 2)}</pre>` : html`<p class="muted">Not kept for this run.</p>`}</section>
<section id="approval-steps"><h2>Steps so far <span class="muted">(${steps.length})</span></h2>${run.trace ? renderSteps(steps, null, projectId) : html`<p class="muted">Not kept for this run.</p>`}</section>
</div>`
  return pageResponse(200, { title: `Approval: ${flowName}`, body })
}

function decisionForm(check: ParkedRunInfo): SafeHtml {
  const due = new Date(check.dueAt).toISOString()
  return html`<section id="approval-decision"><h2>Your decision</h2>
<p>The run waits for an answer until ${timeTag(due)}; then it goes on without one.</p>
<form method="post" class="run-form">
<label for="comment">Comment <span class="hint">(optional, sent with your answer)</span></label>
<textarea id="comment" name="comment" class="json" style="min-height:70px"></textarea>
<p><button type="submit" name="approved" value="true">Approve</button> <button type="submit" name="approved" value="false" class="secondary">Reject</button></p>
</form></section>`
}

function closedNotice(refusal: ErrorCode | null): SafeHtml {
  const text =
    refusal === 'RESUME_EXPIRED'
      ? 'The time to answer has passed; the run went on without an answer.'
      : 'This run is not waiting for an answer: it was answered already.'
  return html`<p class="banner">${text}</p>`
}

/** The page a form post gets back when its answer was taken (a refusal is the error page). */
export function resumeAnswerPage(status: number, title: string, message: string): Response {
  return pageResponse(status, { title, body: html`<h1>${title}</h1><section><p>${message}</p></section>` })
}
