// An async Start (SPEC §12) documents its 202 (queued, with Location) instead of its End's
// statuses, and no 500 (a failure happens in the background); a sync flow beside it is unchanged.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { generateOpenApi } from '../../src/openapi/generate.js'
import { loadProject } from '../../src/project/load.js'
import { ROOT } from '../helpers.js'

describe('OpenAPI of an async Start', async () => {
  const project = await loadProject(join(ROOT, 'fixtures', 'async-jobs'), { env: {} })
  const doc = generateOpenApi(project, { serverUrl: 'https://jobs.test' }) as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }> }>>
    components: { schemas: Record<string, unknown> }
  }

  it("answers 202 with the AsyncAccepted body and a Location header, not the End's 201 or a 500", () => {
    const responses = doc.paths['/api/run/jobs/import-orders']!.post!.responses
    // 409 and 422: the flow takes an Idempotency-Key (a repeat replays the first 202).
    expect(Object.keys(responses)).toEqual(['202', '400', '401', '409', '413', '415', '422', '429', '503'])
    expect(responses['202']!.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/AsyncAccepted' } } })
    expect(Object.keys(responses['202']!.headers!)).toEqual(['Location', 'X-Run-Id'])
    expect(doc.components.schemas.AsyncAccepted).toEqual({
      type: 'object',
      properties: {
        ok: { type: 'boolean', enum: [true] },
        runId: { type: 'string', description: expect.any(String) },
        status: { type: 'string', enum: ['queued'] },
      },
      required: ['ok', 'runId', 'status'],
    })
  })

  it('leaves a synchronous flow of the same project as it was', () => {
    const responses = doc.paths['/api/run/jobs/ping']!.get!.responses
    expect(Object.keys(responses)).toEqual(['200', '400', '429', '500', '503'])
    expect(doc.components.schemas.RunFailed).toBeDefined()
  })
})
