// `GET /api/runs/<projectId>[?flow=&status=&limit=]`: run history records, newest first, for a
// loopback caller or a signed-in viewer (SPEC §14). The answer is the array of records, as
// `flowctl history --json` prints it. `GET /api/runs/<projectId>/<runId>`: one record with its input
// and trace, as `flowctl history show --json` prints it.
import { getRouterParam, type H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { RunStatus } from '../../model/store.js'
import type { AppContext } from '../context.js'
import { countRejections } from '../rejections.js'
import { jsonResponse } from '../respond.js'
import { requireAccess } from '../access.js'

const DEFAULT_RUNS_LIMIT = 50
const MAX_RUNS_LIMIT = 1000

export function runsHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    await requireAccess(context, event, projectId, 'read')
    countRejections(event, projectId)
    const params = event.url.searchParams
    const status = params.get('status') ?? undefined
    if (status !== undefined && status !== 'success' && status !== 'error' && status !== 'skipped') {
      throw httpError('INPUT_INVALID', ['status: must be success, error or skipped'])
    }
    const limitText = params.get('limit')
    const limit = limitText === null ? DEFAULT_RUNS_LIMIT : Number(limitText)
    if (!Number.isInteger(limit) || limit < 1) throw httpError('INPUT_INVALID', ['limit: must be a whole number from 1 to 1000'])
    const store = await context.workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    const flow = params.get('flow') || undefined
    const runs = await readStore(() =>
      store.history.listRuns({ projectId, flow, status: status as RunStatus | undefined, limit: Math.min(limit, MAX_RUNS_LIMIT) }),
    )
    return jsonResponse(200, runs, { 'cache-control': 'no-store' })
  }
}

export function runHandlerById(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    await requireAccess(context, event, projectId, 'read')
    const store = await context.workspace.storeFor(projectId)
    if (!store) throw httpError('STORE_UNAVAILABLE')
    const run = await readStore(() => store.history.getRun(projectId, getRouterParam(event, 'runId') ?? ''))
    if (!run) throw httpError('RUN_NOT_FOUND')
    return jsonResponse(200, run, { 'cache-control': 'no-store' })
  }
}

/** A history read: any failure of the store (not only an outage it recognised) answers 503. */
async function readStore<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    throw httpError('STORE_UNAVAILABLE', undefined, { cause: error })
  }
}
