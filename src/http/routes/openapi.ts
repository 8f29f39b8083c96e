// `GET /api/openapi/<projectId>`: the project's OpenAPI document for a signed-in viewer.
import { getRouterParam, type H3Event } from 'h3'
import { generateOpenApi } from '../../openapi/generate.js'
import { requestOrigin } from '../client.js'
import type { AppContext } from '../context.js'
import { jsonResponse } from '../respond.js'
import { checkReadAccess } from './read-access.js'

export function openApiHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const access = await checkReadAccess(context, event, getRouterParam(event, 'projectId') ?? '')
    if (!access.ok) return access.response
    const document = generateOpenApi(access.entry.project, { serverUrl: requestOrigin(event, context.options) })
    return jsonResponse(200, document, { 'cache-control': 'no-store' })
  }
}
