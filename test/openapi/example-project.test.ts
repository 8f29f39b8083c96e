// The generator against the example project as the real loader reads it.
import { compileErrors, validate } from '@readme/openapi-parser'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatOpenApi } from '../../src/openapi/format.js'
import { generateOpenApi } from '../../src/openapi/generate.js'
import { loadProject } from '../../src/project/load.js'

const EXAMPLE = join(import.meta.dirname, '..', '..', 'fixtures', 'example')

describe('OpenAPI document of fixtures/example', () => {
  it('loads without errors, passes the validator and describes every flow', async () => {
    const project = await loadProject(EXAMPLE, { env: {} })
    expect(project.problems.filter((p) => p.severity === 'error')).toEqual([])
    const doc = generateOpenApi(project, { serverUrl: 'http://localhost:3000' })

    const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0])
    if (!result.valid) throw new Error(compileErrors(result))
    expect(result.warnings).toEqual([])

    expect(Object.keys(doc.paths)).toEqual([
      '/api/run/shop/bulk-quote',
      '/api/run/shop/create-order',
      '/api/run/shop/create-ticket',
      '/api/run/shop/delete-ticket/{id}',
      '/api/run/shop/fetch-status',
      '/api/run/shop/get-ticket/{id}',
      '/api/run/shop/list-tickets',
      '/api/run/shop/order-status/{state}',
      '/api/run/shop/quote',
      '/api/run/shop/stock-check/{sku}',
      '/api/run/shop/update-ticket/{id}',
    ])
    const create = doc.paths['/api/run/shop/create-order']!.post!
    // SPEC §20: the seed's <startNodeId>_<method> when unique (its Start sets operationId, as validate suggests when one is shared).
    expect(create.operationId).toBe('createOrder')
    expect(create.summary).toBe('Create an order')
    expect(create.description).toBe('Takes an order and stores it.')
    expect(create.security).toEqual([{ bearerAuth: [] }])
    expect(create.parameters).toEqual([{ name: 'x-tenant', in: 'header', required: false, schema: { type: 'string', default: 'default' } }])
    expect(Object.keys(create.responses)).toEqual(['201', '202', '400', '401', '413', '415', '429', '500', '503'])

    const status = doc.paths['/api/run/shop/order-status/{state}']!.get!
    expect(status.operationId).toBe('start_get')
    expect(status.requestBody).toBeUndefined()
    expect(status.parameters!.map((p) => `${p.in}:${p.name}:${p.required}`)).toEqual(['path:state:true', 'query:verbose:false'])
    expect(Object.keys(status.responses)).toEqual(['200', '400', '404', '429', '500', '503'])
    expect(status.responses['404']!.description).toBe('Success')

    // The stock service's outage: the onError End's 503, beside the store outage's.
    const stock = doc.paths['/api/run/shop/stock-check/{sku}']!.get!
    expect(stock.operationId).toBe('stock_get')
    const unavailable = stock.responses['503']!.content!['application/json']!.schema as { oneOf: { properties?: Record<string, unknown> }[] }
    expect(unavailable.oneOf.map((s) => Object.keys(s.properties ?? {}))).toEqual([['sku', 'error', 'attempts'], []])

    // nightly-cleanup has `http: false`: schedule-only, no operation.
    expect(project.flows.get('nightly-cleanup')!.start!.http).toBe(false)
    const ids = Object.values(doc.paths).map((item) => Object.values(item)[0]!.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    expect(doc.components!.securitySchemes).toEqual({ bearerAuth: { type: 'http', scheme: 'bearer' } })
  })

  it('exports byte-identical JSON and YAML from two separate loads', async () => {
    const once = generateOpenApi(await loadProject(EXAMPLE, { env: {} }), { serverUrl: 'http://x' })
    const twice = generateOpenApi(await loadProject(EXAMPLE, { env: {} }), { serverUrl: 'http://x' })
    expect(formatOpenApi(twice, 'json')).toBe(formatOpenApi(once, 'json'))
    expect(formatOpenApi(twice, 'yaml')).toBe(formatOpenApi(once, 'yaml'))
  })
})
