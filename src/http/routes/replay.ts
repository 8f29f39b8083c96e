// `POST /api/replay/<projectId>/<runId>` (SPEC §14): the recorded input of a run through the flow's
// current version, for a loopback caller or a signed-in editor or owner. The answer has the shape
// of `?_trace=1` with `replayOf`: `{ runId, replayOf, response: { status, body }, trace }` with the
// run's status, or `{ ok: false, errors, nodeId, runId, replayOf, trace }` (500) when a node failed
// (answerOutcome, src/flow/answer.ts). `?from=failed` (SPEC §22) retries from the failed step
// instead; the answer adds `resumedFrom`.
import { getQuery, getRouterParam, type H3Event } from 'h3'
import { httpError } from '../../errors.js'
import { answerOutcome } from '../../flow/answer.js'
import { isReplayRefusal, replayRun } from '../../flow/replay.js'
import { isCrossSite, requireAccess } from '../access.js'
import type { AppContext } from '../context.js'
import { sendJson } from '../respond.js'
import { logRejected } from '../run-log.js'

export function replayHandler(context: AppContext) {
  return async (event: H3Event): Promise<string> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const access = await requireAccess(context, event, projectId, 'run')
    if (isCrossSite(event)) throw httpError('FORBIDDEN', ['cross-site request refused'])
    const { project } = access.entry
    const store = await context.workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    const runId = getRouterParam(event, 'runId') ?? ''
    const from = replayFrom(getQuery(event).from)
    try {
      const { flow, outcome } = await replayRun({ project, store, runId, trigger: 'http', trace: true, signal: context.options.signal, from })
      const resumedFrom = from && outcome.kind !== 'invalid' ? outcome.record.resumedFrom : undefined
      const answer = answerOutcome(outcome, { trace: true, replayOf: runId, resumedFrom, secrets: project.secrets })
      if (outcome.kind === 'invalid') {
        logRejected(context, projectId, flow.slug, outcome.errors)
        throw answer.error!
      }
      return sendJson(event, answer.status, answer.body, { ...answer.headers, 'cache-control': 'no-store' })
    } catch (error) {
      // Why a run cannot be replayed (no such run, its flow removed, no input kept) is told as it is.
      if (isReplayRefusal(error)) throw httpError(error.code, [error.message], { cause: error })
      throw error
    }
  }
}

/** `?from=failed` retries from the failed step; no `from` replays the whole run; anything else is a 400. */
function replayFrom(value: unknown): 'failed' | undefined {
  if (value === undefined) return undefined
  if (value === 'failed') return 'failed'
  throw httpError('BAD_REQUEST', ['from: must be "failed" (or left out to replay the whole run)'])
}
