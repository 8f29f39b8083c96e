// SPEC §12 in the OpenAPI document: a Start with `idempotency` documents its key header, 409, 422
// and Idempotent-Replayed; one with `concurrency` (reject) documents 429 "flow busy".
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { generateOpenApi } from '../../src/openapi/generate.js'
import { loadProject } from '../../src/project/load.js'
import { ROOT } from '../helpers.js'

describe('OpenAPI document of guarded Starts', () => {
  it('documents the idempotency header, 409, 422, Idempotent-Replayed and the busy 429', async () => {
    const project = await loadProject(join(ROOT, 'fixtures', 'webhooks'), { env: {} })
    const document = generateOpenApi(project, { serverUrl: 'https://api.shop.test' })
    const operation = document.paths['/api/run/hooks/shopify-order']!.post!
    expect(operation.parameters).toContainEqual(expect.objectContaining({ name: 'X-Shopify-Webhook-Id', in: 'header', required: false }))
    const responses = operation.responses as Record<string, { description: string; headers?: Record<string, unknown> }>
    expect(responses['409']!.description).toBe('A request with the same X-Shopify-Webhook-Id is still running')
    expect(responses['422']!.description).toBe('X-Shopify-Webhook-Id already used with a different request')
    expect(responses['429']!.description).toMatch(/flow is busy/)
    expect(Object.keys(responses['202']!.headers ?? {})).toContain('Idempotent-Replayed')

    // A Start without the settings documents none of it.
    const plain = document.paths['/api/run/hooks/basic-report']!.delete!.responses as Record<string, unknown>
    expect(Object.keys(plain)).not.toContain('409')
    expect(Object.keys(plain)).not.toContain('422')
  })
})
