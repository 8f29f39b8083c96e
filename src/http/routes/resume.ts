// `/api/resume/<projectId>/<runId>?token=<token>` (SPEC §22): the URL a callback wait hands out as
// `{{ run.resumeUrl }}`. POST with a JSON body resumes the run at its wait (output `{ body,
// receivedAt }`, port `out`); GET shows the approval page, whose buttons post
// `{ approved: true | false, comment }` (as a form, so they work without JavaScript).
// The token is an HMAC of project, run and the run's park count under the project's key (park.ts):
// whoever holds it may resume that wait, nothing else. Answers: wrong or missing token 401, a wait
// already resumed (or a token of an earlier wait of the run) 409, past its timeout 410. A retrying
// sender's second POST gets 409: the first one was stored before its 202 was sent, so the 409 says
// "done already", and the run goes on once.
import { getRouterParam, type H3Event } from 'h3'
import { httpError, type ErrorCode } from '../../errors.js'
import { resumeToken, tokenMatches } from '../../flow/park.js'
import type { Project } from '../../model/project.js'
import type { Store } from '../../model/store.js'
import type { ParkedRunInfo } from '../../model/waits.js'
import { isJsonContentType, mediaTypeOf, parseFormText, parseJsonText, readBodyBytes } from '../body.js'
import type { AppContext } from '../context.js'
import { jsonResponse } from '../respond.js'
import { renderApprovalPage, resumeAnswerPage } from '../pages/approval.js'
import { errorPage } from '../pages/error-page.js'

/** Where a token stands against the run's parked row. */
type TokenCheck = { ok: true; row: ParkedRunInfo } | { ok: false; code: ErrorCode; message?: string }

export function resumeHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const target = await resolveTarget(context, event)
    const check = await checkToken(target)
    // A browser (the approval page's form) gets pages back; any other sender JSON.
    const browser = event.req.method === 'GET' || (event.req.headers.get('accept') ?? '').includes('text/html')
    if (event.req.method === 'GET') {
      const run = await target.store.history.getRun(target.project.settings.projectId, target.runId)
      return renderApprovalPage({
        project: target.project,
        runId: target.runId,
        run,
        check: check.ok ? check.row : null,
        refusal: check.ok ? null : check.code,
      })
    }
    if (!check.ok) throw refusal(check, browser)
    const payload = await readPayload(event, target.project)
    const receivedAt = new Date().toISOString()
    const result = await target.store.waits.deliver(
      target.project.settings.projectId,
      target.runId,
      check.row.seq,
      JSON.stringify({ body: payload, receivedAt }),
    )
    if (result !== 'delivered') {
      const code: ErrorCode = result === 'expired' ? 'RESUME_EXPIRED' : 'RUN_NOT_WAITING'
      throw refusal({ ok: false, code }, browser)
    }
    context.options.runResumed?.(target.project.settings.projectId)
    const answer = { ok: true, runId: target.runId, status: 'resumed', receivedAt }
    if (browser) return resumeAnswerPage(202, 'Thank you', 'Your answer was recorded; the run goes on.')
    return jsonResponse(202, answer, { 'cache-control': 'no-store' })
  }
}

interface Target {
  project: Project
  store: Store
  runId: string
  token: string
}

async function resolveTarget(context: AppContext, event: H3Event): Promise<Target> {
  const projectId = getRouterParam(event, 'projectId') ?? ''
  const entry = context.workspace.get(projectId)
  if (!entry) throw httpError('RUN_NOT_FOUND')
  const store = await context.workspace.storeFor(projectId)
  if (!store) throw httpError('STORE_UNAVAILABLE')
  return { project: entry.project, store, runId: getRouterParam(event, 'runId') ?? '', token: event.url.searchParams.get('token') ?? '' }
}

/** The token against the run's current park (ok), an earlier park of it (409), or nothing (401). */
async function checkToken(target: Target): Promise<TokenCheck> {
  const { project, store, runId, token } = target
  const projectId = project.settings.projectId
  if (!token || runId === '') return { ok: false, code: 'AUTH_REQUIRED' }
  const key = await store.waits.resumeKey(projectId)
  const row = await store.waits.lookup(projectId, runId)
  const seq = row?.seq ?? 1
  const current = tokenMatches(resumeToken(key, projectId, runId, seq), token)
  if (!row) return current ? { ok: false, code: 'RUN_NOT_WAITING', message: 'the run is not waiting for a callback yet' } : { ok: false, code: 'AUTH_REQUIRED' }
  if (!current) {
    for (let earlier = seq - 1; earlier >= 1; earlier--)
      if (tokenMatches(resumeToken(key, projectId, runId, earlier), token)) return { ok: false, code: 'RUN_NOT_WAITING' }
    return { ok: false, code: 'AUTH_REQUIRED' }
  }
  if (row.kind !== 'callback') return { ok: false, code: 'RUN_NOT_WAITING' }
  if (row.port === 'timeout' || (row.status === 'waiting' && row.dueAt <= Date.now())) return { ok: false, code: 'RESUME_EXPIRED' }
  if (row.status !== 'waiting') return { ok: false, code: 'RUN_NOT_WAITING' }
  return { ok: true, row }
}

/** A JSON body, or the approval page's form (`approved`, `comment`) as `{ approved, comment }`. */
async function readPayload(event: H3Event, project: Project): Promise<unknown> {
  const read = await readBodyBytes(event.req, project.settings.limits.bodyLimitBytes, (event.runtime as { node?: { req?: never } } | undefined)?.node?.req)
  if (!read.ok) throw httpError('BODY_TOO_LARGE', [read.error])
  const text = new TextDecoder().decode(read.bytes)
  const type = event.req.headers.get('content-type')
  const form = mediaTypeOf(type) === 'application/x-www-form-urlencoded' ? parseFormText(text) : null
  // The approval page's buttons; a JSON body sent with a form content type (curl -d) is read as JSON.
  if (form && 'approved' in form) {
    const approved = form.approved === 'true' ? true : form.approved === 'false' ? false : null
    if (approved === null) throw httpError('INPUT_INVALID', ['body/approved: must be true or false'])
    return { approved, comment: typeof form.comment === 'string' ? form.comment : '' }
  }
  if (type !== null && !form && !isJsonContentType(type)) throw httpError('UNSUPPORTED_MEDIA_TYPE', ['body: send JSON (content-type application/json)'])
  if (text.trim() === '') return null
  const parsed = parseJsonText(text)
  if (!parsed.ok) throw httpError('INPUT_INVALID', [parsed.error])
  return parsed.body
}

/** The refusal as JSON for senders, or as a page for a browser's form post. */
function refusal(check: Extract<TokenCheck, { ok: false }>, browser: boolean): Error {
  const error = httpError(check.code, check.message ? [check.message] : undefined)
  if (!browser) return error
  return new PageAnswer(errorPage(error, titleOf(check.code)))
}

function titleOf(code: ErrorCode): string {
  if (code === 'AUTH_REQUIRED') return 'This link is not valid'
  if (code === 'RESUME_EXPIRED') return 'Too late'
  return 'Already answered'
}

/** A page thrown as the answer (h3 sends a thrown Response's page). */
class PageAnswer extends Error {
  constructor(readonly response: Response) {
    super('page answer')
  }
}

/** Routes answer a thrown PageAnswer with its page. */
export function withPageAnswers(handler: (event: H3Event) => Promise<Response>) {
  return async (event: H3Event): Promise<Response> => {
    try {
      return await handler(event)
    } catch (error) {
      if (error instanceof PageAnswer) return error.response
      throw error
    }
  }
}
