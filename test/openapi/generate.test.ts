import { compileErrors, validate } from '@readme/openapi-parser'
import { describe, expect, it } from 'vitest'
import { formatOpenApi } from '../../src/openapi/format.js'
import { generateOpenApi, type OpenApiDocument } from '../../src/openapi/generate.js'
import type { Flow } from '../../src/model/project.js'
import { flow, node, project, simpleFlow } from './build-project.js'

const SERVER = 'http://localhost:3000'
const generate = (flows: Flow[], settings?: { projectId?: string; name?: string }) => generateOpenApi(project(flows, settings), { serverUrl: SERVER })

/** Validates with a real OpenAPI validator (it mutates its input, hence the clone). */
async function expectValidDocument(doc: OpenApiDocument): Promise<void> {
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0])
  if (!result.valid) throw new Error(compileErrors(result))
  expect(result.specification).toBe('OpenAPI')
  expect(result.warnings).toEqual([])
}

/** A flow: Start (post, body) -> If -> two Ends (201 and 202), like the example's create-order. */
function orderFlow(): Flow {
  return flow({
    slug: 'create-order',
    name: 'Create Order',
    description: 'Takes an order.',
    auth: { type: 'bearer', token: 'secret' },
    inputs: {
      headers: { type: 'object', properties: { 'x-tenant': { type: 'string' } }, required: ['x-tenant'] },
      body: { type: 'object', required: ['sku'], properties: { sku: { type: 'string', minLength: 1 }, qty: { type: 'integer', exclusiveMinimum: 0 } } },
    },
    startNext: 'check',
    nodes: [
      { id: 'check', type: 'if', condition: { left: 1, op: 'eq', right: 1 }, next: { true: 'big', false: 'small' } },
      { id: 'big', type: 'end', status: 202, schema: { type: 'object', properties: { review: { const: true } } } },
      { id: 'small', type: 'end', status: 201, schema: { type: 'object', properties: { id: { type: 'string' } } } },
    ],
  })
}

describe('generateOpenApi: document', () => {
  it('writes openapi, info, servers and tags from the project', () => {
    const doc = generateOpenApi(project([orderFlow()], { name: 'Orders' }), { serverUrl: 'https://api.example.com/' })
    expect(doc.openapi).toBe('3.0.3')
    expect(doc.info).toEqual({ title: 'Orders', version: '1.0.0' })
    expect(doc.servers).toEqual([{ url: 'https://api.example.com' }])
    expect(doc.tags).toEqual([{ name: 'Orders' }])
    expect(Object.keys(doc)).toEqual(['openapi', 'info', 'servers', 'tags', 'paths', 'components'])
  })

  it('has one path per flow with a Start node, sorted, with {param} segments in order', () => {
    const doc = generate([
      simpleFlow('zeta'),
      flow({ slug: 'no-start', noStart: true, nodes: [{ id: 'done', type: 'end' }] }),
      simpleFlow('alpha', { method: 'get', inputs: { path: { type: 'object', properties: { shop: { type: 'string' }, id: { type: 'integer' } } } } }),
      simpleFlow('beta'),
    ])
    expect(Object.keys(doc.paths)).toEqual(['/api/run/shop/alpha/{shop}/{id}', '/api/run/shop/beta', '/api/run/shop/zeta'])
  })

  it('leaves out components entirely when no flow is callable', () => {
    const doc = generate([flow({ slug: 'cron-only', noStart: true })])
    expect(doc.paths).toEqual({})
    expect('components' in doc).toBe(false)
  })
})

describe('generateOpenApi: operations', () => {
  it('uses the Start method, its name as summary, the flow description, operationId and tag', () => {
    const doc = generate([orderFlow(), simpleFlow('plain', { method: 'put', startId: 'begin', startName: 'Begin Here' })])
    const create = doc.paths['/api/run/shop/create-order']!.post!
    expect(create.summary).toBe('Start')
    expect(create.description).toBe('Takes an order.')
    expect(create.operationId).toBe('start_post')
    expect(create.tags).toEqual(['Shop API'])
    const plain = doc.paths['/api/run/shop/plain']!
    expect(Object.keys(plain)).toEqual(['put'])
    expect(plain.put!.summary).toBe('Begin Here')
    expect(plain.put!.operationId).toBe('begin_put')
    expect('description' in plain.put!).toBe(false)
    expect(Object.keys(create)).toEqual(['summary', 'description', 'operationId', 'tags', 'security', 'parameters', 'requestBody', 'responses'])
  })

  // SPEC §5.2 and §20: the seed's `<startNodeId>_<method>` whenever it is unique in the document;
  // when several operations would share one, each gets `_<slug>` with `-` written `_`.
  const ids = (doc: ReturnType<typeof generate>) =>
    Object.fromEntries(Object.entries(doc.paths).map(([path, item]) => [path, Object.values(item)[0]!.operationId]))
  it.each([
    ['one flow keeps the seed form', [simpleFlow('create-order')], { 'create-order': 'start_post' }],
    [
      'distinct Start ids and methods keep the seed form',
      [simpleFlow('create-order', { startId: 'create' }), simpleFlow('get-order', { method: 'get' }), simpleFlow('quote', { method: 'put' })],
      { 'create-order': 'create_post', 'get-order': 'start_get', quote: 'start_put' },
    ],
    [
      'a shared id gets _<slug> on each of them, hyphens written _',
      [simpleFlow('create-ticket'), simpleFlow('create-order'), simpleFlow('fetch', { method: 'get' })],
      { 'create-order': 'start_post_create_order', 'create-ticket': 'start_post_create_ticket', fetch: 'start_get' },
    ],
    [
      'an explicit operationId is kept when unique, and suffixed like a default when shared',
      [
        simpleFlow('b', { operationId: 'createThing' }),
        simpleFlow('a', { operationId: 'createThing' }),
        simpleFlow('c', { operationId: 'start_post' }),
        simpleFlow('d'),
      ],
      { a: 'createThing_a', b: 'createThing_b', c: 'start_post_c', d: 'start_post_d' },
    ],
    [
      'a name kept as it is wins over a suffixed one, which then gets a number',
      [simpleFlow('a-b'), simpleFlow('c'), simpleFlow('z', { operationId: 'start_post_a_b' })],
      { 'a-b': 'start_post_a_b_2', c: 'start_post_c', z: 'start_post_a_b' },
    ],
  ] as const)('operationIds: %s', (_name, flows, expected) => {
    const doc = generate([...flows])
    const byPath = Object.fromEntries(Object.entries(expected).map(([slug, id]) => [`/api/run/shop/${slug}`, id]))
    expect(ids(doc)).toEqual(
      Object.fromEntries(
        Object.keys(byPath)
          .sort()
          .map((path) => [path, byPath[path]]),
      ),
    )
  })

  it('uses the Start summary setting, else the Start name', () => {
    const doc = generate([simpleFlow('b', { operationId: 'createThing', summary: 'Create a thing' }), simpleFlow('a', { operationId: 'makeThing' })])
    expect(doc.paths['/api/run/shop/b']!.post!.summary).toBe('Create a thing')
    expect(doc.paths['/api/run/shop/a']!.post!.summary).toBe('Start')
    expect(doc.paths['/api/run/shop/a']!.post!.operationId).toBe('makeThing')
  })

  it('leaves out flows with http: false', () => {
    const doc = generate([simpleFlow('nightly', { http: false }), simpleFlow('open')])
    expect(Object.keys(doc.paths)).toEqual(['/api/run/shop/open'])
  })

  it('lists one requestBody media type per accepted body type', () => {
    const body = { type: 'object', properties: { n: { type: 'integer' } } }
    const doc = generate([
      simpleFlow('both', { accept: ['json', 'form'], inputs: { body } }),
      simpleFlow('form', { accept: ['form'], inputs: { body } }),
      simpleFlow('text', { accept: ['text'], inputs: { body: { type: 'string', maxLength: 10 } } }),
      simpleFlow('text-any', { accept: ['text'] }),
    ])
    expect(Object.keys(doc.paths['/api/run/shop/both']!.post!.requestBody!.content)).toEqual(['application/json', 'application/x-www-form-urlencoded'])
    expect(doc.paths['/api/run/shop/form']!.post!.requestBody!.content).toEqual({ 'application/x-www-form-urlencoded': { schema: body } })
    expect(doc.paths['/api/run/shop/text']!.post!.requestBody).toEqual({
      required: true,
      content: { 'text/plain': { schema: { type: 'string', maxLength: 10 } } },
    })
    expect(doc.paths['/api/run/shop/text-any']!.post!.requestBody).toEqual({ required: false, content: { 'text/plain': { schema: { type: 'string' } } } })
  })

  it('writes path (required), query and header parameters with converted schemas', () => {
    const doc = generate([
      simpleFlow('lookup', {
        method: 'get',
        inputs: {
          path: { type: 'object', properties: { shop: { type: 'string', description: 'Shop id' } } },
          query: { type: 'object', properties: { verbose: { type: 'boolean', default: false }, limit: { type: ['integer', 'null'] } }, required: ['limit'] },
          headers: { type: 'object', properties: { 'x-tenant': { type: 'string' } }, required: ['x-tenant'] },
        },
      }),
    ])
    expect(doc.paths['/api/run/shop/lookup/{shop}']!.get!.parameters).toEqual([
      { name: 'shop', in: 'path', description: 'Shop id', required: true, schema: { type: 'string', description: 'Shop id' } },
      { name: 'verbose', in: 'query', required: false, schema: { type: 'boolean', default: false } },
      { name: 'limit', in: 'query', required: true, schema: { type: 'integer', nullable: true } },
      { name: 'x-tenant', in: 'header', required: true, schema: { type: 'string' } },
    ])
  })

  it('omits parameters when there are none', () => {
    expect('parameters' in generate([simpleFlow('bare')]).paths['/api/run/shop/bare']!.post!).toBe(false)
  })

  it('has a required JSON requestBody for non-GET methods with body inputs only', () => {
    const body = { type: 'object', properties: { n: { type: 'number', exclusiveMaximum: 5 } } }
    const doc = generate([
      simpleFlow('post-body', { inputs: { body } }),
      simpleFlow('delete-body', { method: 'delete', inputs: { body } }),
      simpleFlow('get-body', { method: 'get', inputs: { body } }),
      simpleFlow('post-nobody', { inputs: {} }),
    ])
    expect(doc.paths['/api/run/shop/post-body']!.post!.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { type: 'object', properties: { n: { type: 'number', maximum: 5, exclusiveMaximum: true } } } } },
    })
    expect(doc.paths['/api/run/shop/delete-body']!.delete!.requestBody).toBeDefined()
    expect(doc.paths['/api/run/shop/get-body']!.get!.requestBody).toBeUndefined()
    expect(doc.paths['/api/run/shop/post-nobody']!.post!.requestBody).toBeUndefined()
  })
})

describe('generateOpenApi: responses', () => {
  it('lists each reachable End status as "Success" with its converted schema; unreachable Ends are left out', () => {
    const f = orderFlow()
    f.nodes.push(node({ id: 'orphan', type: 'end', name: 'Orphan', status: 418 }))
    f.nodesById.set('orphan', f.nodes.at(-1)!)
    const responses = generate([f]).paths['/api/run/shop/create-order']!.post!.responses
    expect(Object.keys(responses)).toEqual(['201', '202', '400', '401', '413', '415', '429', '500', '503'])
    expect(responses['202']).toMatchObject({
      description: 'Success',
      content: { 'application/json': { schema: { type: 'object', properties: { review: { enum: [true] } } } } },
    })
    expect(responses['201']!.headers).toHaveProperty('X-Run-Id')
  })

  it('uses status 200 and the open schema {} for an End without status or schema', () => {
    const responses = generate([simpleFlow('bare')]).paths['/api/run/shop/bare']!.post!.responses
    expect(responses['200']).toMatchObject({ description: 'Success', content: { 'application/json': { schema: {} } } })
  })

  it('makes a oneOf of the distinct schemas of Ends with one status', () => {
    const a = { type: 'object', properties: { a: { type: 'string' } } }
    const b = { type: 'object', properties: { b: { type: 'string' } } }
    const f = flow({
      slug: 'route',
      startNext: 'sw',
      nodes: [
        {
          id: 'sw',
          type: 'switch',
          value: 1,
          cases: [
            { value: 1, port: 'one' },
            { value: 2, port: 'two' },
          ],
          default: 'other',
          next: { one: 'e1', two: 'e2', other: 'e3' },
        },
        { id: 'e1', type: 'end', schema: a },
        { id: 'e2', type: 'end', schema: b },
        { id: 'e3', type: 'end', schema: { ...a } },
      ],
    })
    const responses = generate([f]).paths['/api/run/shop/route']!.post!.responses
    expect(responses['200']!.content!['application/json']!.schema).toEqual({ oneOf: [a, b] })
    expect(responses['204']).toBeUndefined()
  })

  it('adds 204 "No content" when some path ends without an End node', () => {
    const ifMissingFalse = flow({
      slug: 'maybe',
      startNext: 'check',
      nodes: [
        { id: 'check', type: 'if', condition: { left: 1, op: 'eq', right: 1 }, next: { true: 'done' } },
        { id: 'done', type: 'end', status: 201 },
      ],
    })
    const switchMissingDefault = flow({
      slug: 'sw',
      startNext: 'sw',
      nodes: [
        { id: 'sw', type: 'switch', value: 1, cases: [{ value: 1, port: 'one' }], next: { one: 'done' } },
        { id: 'done', type: 'end' },
      ],
    })
    const noEndAtAll = flow({ slug: 'log', startNext: 'set', nodes: [{ id: 'set', type: 'set', values: { a: 1 } }] })
    const doc = generate([ifMissingFalse, switchMissingDefault, noEndAtAll])
    const noContent = { description: 'No content', headers: { 'X-Run-Id': { description: 'Id of the run in run history', schema: { type: 'string' } } } }
    expect(doc.paths['/api/run/shop/maybe']!.post!.responses['204']).toEqual(noContent)
    expect(Object.keys(doc.paths['/api/run/shop/maybe']!.post!.responses)).toEqual(['201', '204', '400', '413', '415', '429', '500', '503'])
    expect(doc.paths['/api/run/shop/sw']!.post!.responses['204']).toEqual(noContent)
    expect(Object.keys(doc.paths['/api/run/shop/log']!.post!.responses)).toEqual(['204', '400', '413', '415', '429', '500', '503'])
  })

  it('always has 400 "Validation error" with the error body, and 401 only with auth', async () => {
    const doc = generate([orderFlow(), simpleFlow('open')])
    const secured = doc.paths['/api/run/shop/create-order']!.post!.responses
    const open = doc.paths['/api/run/shop/open']!.post!.responses
    const ref = { $ref: '#/components/schemas/ErrorResponse' }
    expect(secured['400']).toEqual({ description: 'Validation error', content: { 'application/json': { schema: ref } } })
    expect(secured['401']).toEqual({
      description: 'Unauthorized',
      headers: { 'WWW-Authenticate': { description: 'The credential expected', schema: { type: 'string' } } },
      content: { 'application/json': { schema: ref } },
    })
    expect(open['400']).toEqual(secured['400'])
    expect(open['401']).toBeUndefined()
    expect(open['500']!.description).toBe('Run failed')
    expect(doc.components!.schemas!.ErrorResponse).toEqual({
      type: 'object',
      properties: { ok: { type: 'boolean', enum: [false] }, errors: { type: 'array', items: { type: 'string' } } },
      required: ['ok', 'errors'],
    })
    await expectValidDocument(doc)
  })

  it('keeps an End answering 400 as "Success" and adds the validation error body beside it', async () => {
    const doc = generate([simpleFlow('reject', { status: 400, schema: { type: 'object', properties: { reason: { type: 'string' } } } })])
    const response = doc.paths['/api/run/shop/reject']!.post!.responses['400']!
    expect(response.description).toBe('Success')
    expect(response.content!['application/json']!.schema).toEqual({
      oneOf: [{ type: 'object', properties: { reason: { type: 'string' } } }, { $ref: '#/components/schemas/ErrorResponse' }],
    })
    await expectValidDocument(doc)
  })
})

describe('generateOpenApi: security', () => {
  it('declares one scheme per kind of auth with deterministic names and references it', async () => {
    const doc = generate([
      simpleFlow('b1', { auth: { type: 'bearer', token: 't' } }),
      simpleFlow('b2', { auth: { type: 'bearer', token: 'other' } }),
      simpleFlow('basic', { auth: { type: 'basic', username: 'u', password: 'p' } }),
      simpleFlow('key', { auth: { type: 'apiKey', key: 'k', header: 'X-API-Key' } }),
      simpleFlow('key-lower', { auth: { type: 'apiKey', key: 'k', header: 'x-api-key' } }),
      simpleFlow('key-empty', { auth: { type: 'apiKey', key: 'k', header: '' } }),
      simpleFlow('key-custom', { auth: { type: 'apiKey', key: 'k', header: 'X-Shop-Key' } }),
      simpleFlow('github', { auth: { type: 'hmac', secret: 's', header: 'X-Hub-Signature-256', algorithm: 'sha256', prefix: 'sha256=', encoding: 'hex' } }),
      simpleFlow('github-2', {
        auth: { type: 'hmac', secret: 'other', header: 'X-Hub-Signature-256', algorithm: 'sha256', prefix: 'sha256=', encoding: 'hex' },
      }),
      simpleFlow('shopify', { auth: { type: 'hmac', secret: 's', header: 'X-Shopify-Hmac-Sha256', algorithm: 'sha256', prefix: '', encoding: 'base64' } }),
      simpleFlow('open'),
    ])
    expect(doc.components!.securitySchemes).toEqual({
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      'apiKeyAuth_X-Shop-Key': { type: 'apiKey', in: 'header', name: 'X-Shop-Key' },
      basicAuth: { type: 'http', scheme: 'basic' },
      bearerAuth: { type: 'http', scheme: 'bearer' },
      'hmacAuth_X-Hub-Signature-256': {
        type: 'apiKey',
        in: 'header',
        name: 'X-Hub-Signature-256',
        description: 'HMAC-SHA256 of the raw request body with the shared secret, hex-encoded, prefixed with "sha256=".',
      },
      'hmacAuth_X-Shopify-Hmac-Sha256': {
        type: 'apiKey',
        in: 'header',
        name: 'X-Shopify-Hmac-Sha256',
        description: 'HMAC-SHA256 of the raw request body with the shared secret, base64-encoded.',
      },
    })
    const security = (slug: string) => Object.values(doc.paths[`/api/run/shop/${slug}`]!)[0]!.security
    expect(security('b1')).toEqual([{ bearerAuth: [] }])
    expect(security('b2')).toEqual([{ bearerAuth: [] }])
    expect(security('basic')).toEqual([{ basicAuth: [] }])
    expect(security('key')).toEqual([{ apiKeyAuth: [] }])
    expect(security('key-lower')).toEqual([{ apiKeyAuth: [] }])
    expect(security('key-empty')).toEqual([{ apiKeyAuth: [] }])
    expect(security('key-custom')).toEqual([{ 'apiKeyAuth_X-Shop-Key': [] }])
    expect(security('github')).toEqual([{ 'hmacAuth_X-Hub-Signature-256': [] }])
    expect(security('github-2')).toEqual([{ 'hmacAuth_X-Hub-Signature-256': [] }])
    // Open operations say so explicitly (Redocly: security-defined).
    expect(security('open')).toEqual([])
    await expectValidDocument(doc)
  })

  it('omits securitySchemes when no Start has auth', () => {
    const doc = generate([simpleFlow('open')])
    expect(Object.keys(doc.components!)).toEqual(['schemas'])
  })
})

describe('generateOpenApi: stable output', () => {
  const flows = () => [
    orderFlow(),
    simpleFlow('quote', { inputs: { body: { type: 'object', properties: { items: { type: 'array' } } } } }),
    simpleFlow('status', {
      method: 'get',
      startId: 'begin',
      auth: { type: 'apiKey', key: 'k', header: 'X-Key' },
      inputs: { path: { type: 'object', properties: { id: { type: 'string' } } } },
    }),
    simpleFlow('basic', { auth: { type: 'basic', username: 'u', password: 'p' } }),
  ]

  it('is byte-identical across runs and whatever order the flows Map was filled in', () => {
    const first = formatOpenApi(generate(flows()), 'json')
    expect(formatOpenApi(generate(flows()), 'json')).toBe(first)
    expect(formatOpenApi(generate(flows().reverse()), 'json')).toBe(first)
    expect(formatOpenApi(generate([flows()[2]!, flows()[0]!, flows()[3]!, flows()[1]!]), 'json')).toBe(first)
  })

  it('formats JSON with 2-space indent and a trailing newline, and YAML in the same key order', async () => {
    const doc = generate(flows())
    const json = formatOpenApi(doc, 'json')
    expect(json.startsWith('{\n  "openapi": "3.0.3",\n  "info": {')).toBe(true)
    expect(json.endsWith('}\n')).toBe(true)
    const yaml = formatOpenApi(doc, 'yaml')
    expect(yaml.startsWith('openapi: 3.0.3\ninfo:\n  title: Shop API\n')).toBe(true)
    expect(yaml).not.toMatch(/[&*]a\d/) // no anchors or aliases
    const { parse } = await import('yaml')
    expect(JSON.stringify(parse(yaml))).toBe(JSON.stringify(doc)) // same keys, same order
  })

  it('does not share objects with the project or between documents', () => {
    const f = flows()
    const doc = generate(f)
    const again = generate(f)
    doc.components!.schemas!.ErrorResponse!.type = 'string'
    ;(doc.paths['/api/run/shop/quote']!.post!.requestBody!.content['application/json']!.schema as { type: string }).type = 'x'
    expect(again.components!.schemas!.ErrorResponse!.type).toBe('object')
    expect(f[1]!.start!.inputs.body!.type).toBe('object')
  })
})

describe('generateOpenApi: passes a real OpenAPI 3.0.3 validator', () => {
  it.each([
    ['the order flow', () => generate([orderFlow()])],
    [
      'many kinds of flows',
      () =>
        generate([
          orderFlow(),
          simpleFlow('a', {
            method: 'get',
            inputs: {
              path: { type: 'object', properties: { x: { type: 'string' }, y: { type: 'integer', exclusiveMinimum: 0 } } },
              query: { type: 'object', properties: { q: { type: ['string', 'null'], 'x-ui': 1 } } },
            },
          }),
          simpleFlow('b', {
            method: 'patch',
            schema: {
              type: 'object',
              properties: { v: { const: 'x' }, list: { type: 'array' }, n: { type: 'null' } },
              $schema: 'http://json-schema.org/draft-07/schema#',
            },
            inputs: { body: { type: 'object', properties: { choice: { type: ['string', 'number', 'null'] } }, $defs: { z: {} } } },
          }),
          simpleFlow('c', { method: 'delete', auth: { type: 'apiKey', key: 'k', header: 'X-Other' } }),
          flow({
            slug: 'd',
            startNext: 'x',
            nodes: [
              { id: 'x', type: 'if', condition: {}, next: { true: 'e' } },
              { id: 'e', type: 'end', status: 204 },
            ],
          }),
        ]),
    ],
    ['an empty project', () => generate([])],
  ])('%s', async (_name, make) => {
    await expectValidDocument(make())
  })

  it('the validator is not vacuous: it rejects what 3.0.3 forbids', async () => {
    const doc = generate([orderFlow(), simpleFlow('other')])
    const duplicateIds = structuredClone(doc)
    duplicateIds.paths['/api/run/shop/other']!.post!.operationId = doc.paths['/api/run/shop/create-order']!.post!.operationId
    await expect(expectValidDocument(duplicateIds)).rejects.toThrow(/operationId/i)
    const nullType = structuredClone(doc)
    nullType.paths['/api/run/shop/other']!.post!.responses['200']!.content!['application/json']!.schema = { type: 'null' }
    await expect(expectValidDocument(nullType)).rejects.toThrow()
  })
})
