// `GET /api/runs/<projectId>[?flow=&status=&limit=]`: run history records, newest first, for a
// loopback caller or a signed-in viewer (SPEC §14). The answer is the array of records, as
// `flowctl history --json` prints it. `GET /api/runs/<projectId>/<runId>`: one record with its input
// and trace, as `flowctl history show --json` prints it.
import { getRouterParam, type H3Event } from 'h3'
import type { RunStatus } from '../../model/store.js'
import type { AppContext } from '../context.js'
import { errorResponse, jsonResponse, STORE_UNAVAILABLE } from '../respond.js'
import { accessResponse, projectAccess } from '../access.js'

export const DEFAULT_RUNS_LIMIT = 50
export const MAX_RUNS_LIMIT = 1000

export function runsHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const access = await projectAccess(context, event, projectId, 'read')
    if (!access.ok) return accessResponse(access)
    const params = event.url.searchParams
    const status = params.get('status') ?? undefined
    if (status !== undefined && status !== 'success' && status !== 'error' && status !== 'skipped') {
      context.rejections.count(projectId, 400)
      return errorResponse(400, ['status: must be success, error or skipped'])
    }
    const limitText = params.get('limit')
    const limit = limitText === null ? DEFAULT_RUNS_LIMIT : Number(limitText)
    if (!Number.isInteger(limit) || limit < 1) {
      context.rejections.count(projectId, 400)
      return errorResponse(400, ['limit: must be a whole number from 1 to 1000'])
    }
    const store = await context.workspace.storeFor(projectId)
    if (!store) {
      context.rejections.count(projectId, 503)
      return errorResponse(503, [STORE_UNAVAILABLE])
    }
    const flow = params.get('flow') || undefined
    try {
      const runs = await store.listRuns({ projectId, flow, status: status as RunStatus | undefined, limit: Math.min(limit, MAX_RUNS_LIMIT) })
      return jsonResponse(200, runs, { 'cache-control': 'no-store' })
    } catch {
      context.rejections.count(projectId, 503)
      return errorResponse(503, [STORE_UNAVAILABLE])
    }
  }
}

export function runHandlerById(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const projectId = getRouterParam(event, 'projectId') ?? ''
    const access = await projectAccess(context, event, projectId, 'read')
    if (!access.ok) return accessResponse(access)
    const store = await context.workspace.storeFor(projectId)
    if (!store) return errorResponse(503, [STORE_UNAVAILABLE])
    try {
      const run = await store.getRun(projectId, getRouterParam(event, 'runId') ?? '')
      return run ? jsonResponse(200, run, { 'cache-control': 'no-store' }) : errorResponse(404, ['run not found'])
    } catch {
      return errorResponse(503, [STORE_UNAVAILABLE])
    }
  }
}
