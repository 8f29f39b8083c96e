// `GET /api/openapi/<projectId>`: the project's OpenAPI document for a signed-in viewer.
import { getRouterParam, type H3Event } from 'h3'
import { generateOpenApi } from '../../openapi/generate.js'
import { requestOrigin } from '../client.js'
import type { AppContext } from '../context.js'
import { jsonResponse } from '../respond.js'
import { requireReadAccess } from './read-access.js'

export function openApiHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const entry = await requireReadAccess(context, event, getRouterParam(event, 'projectId') ?? '')
    const document = generateOpenApi(entry.project, { serverUrl: requestOrigin(event, context.options) })
    return jsonResponse(200, document, { 'cache-control': 'no-store' })
  }
}
