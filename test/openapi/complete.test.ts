// SPEC §20 "OpenAPI, complete": Ends reached through onError, the /api/result operation of projects
// with async Starts, and End body properties that may be null at run time.
import { compileErrors, validate } from '@readme/openapi-parser'
import { describe, expect, it } from 'vitest'
import { generateOpenApi, type OpenApiDocument } from '../../src/openapi/generate.js'
import type { AuthSettings, Flow, JsonSchema } from '../../src/model/project.js'
import { flow, project, simpleFlow } from './build-project.js'
import type { NodeSpec } from '../flow/build.js'

const generate = (flows: Flow[], limits: { runsPerMinutePerIp?: number } = {}) => {
  const p = project(flows)
  Object.assign(p.settings.limits, limits)
  return generateOpenApi(p, { serverUrl: 'http://localhost:3000' })
}

async function expectValidDocument(doc: OpenApiDocument): Promise<void> {
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0])
  if (!result.valid) throw new Error(compileErrors(result))
  expect(result.warnings).toEqual([])
}

const json = (response: { content?: Record<string, { schema: JsonSchema }> } | undefined) => response?.content?.['application/json']?.schema

describe('Ends reached through onError', () => {
  const unavailable = { type: 'object', properties: { error: { type: 'string' }, attempts: { type: 'integer' } } }
  const stock = flow({
    slug: 'stock-check',
    method: 'get',
    startNext: 'lookup',
    nodes: [
      { id: 'lookup', type: 'http', name: 'Lookup', url: 'http://stock.test', onError: 'unavailable', next: 'done' },
      { id: 'done', type: 'end', name: 'Done', schema: { type: 'object', properties: { count: { type: 'integer' } } } },
      {
        id: 'unavailable',
        type: 'end',
        name: 'Unavailable',
        status: 503,
        body: { error: '{{ lookup.error }}', attempts: '{{ lookup.attempts }}' },
        schema: unavailable,
      },
    ],
  })

  it('documents their status and body like any End (here beside the store outage 503)', async () => {
    const doc = generate([stock])
    const responses = doc.paths['/api/run/shop/stock-check']!.get!.responses
    expect(responses['503']!.description).toBe('Success')
    expect(json(responses['503'])).toEqual({ oneOf: [unavailable, { $ref: '#/components/schemas/ErrorResponse' }] })
    expect(responses['503']!.headers).toHaveProperty('X-Run-Id')
    await expectValidDocument(doc)
  })

  it('follows onError branches through further nodes, and from nodes reached only by one', () => {
    const chained = flow({
      slug: 'chained',
      startNext: 'first',
      nodes: [
        { id: 'first', type: 'http', url: 'http://a.test', onError: 'second', next: 'done' },
        { id: 'second', type: 'http', url: 'http://b.test', onError: 'gone', next: 'retried' },
        { id: 'retried', type: 'end', status: 202 },
        { id: 'gone', type: 'end', status: 502 },
        { id: 'done', type: 'end' },
      ],
    })
    expect(Object.keys(generate([chained]).paths['/api/run/shop/chained']!.post!.responses)).toEqual(expect.arrayContaining(['200', '202', '502']))
  })
})

describe('GET /api/result/<projectId>/{runId}', () => {
  const bearer: AuthSettings = { type: 'bearer', token: 't' }
  const asyncFlow = (slug: string, auth: AuthSettings | null) => {
    const f = simpleFlow(slug, { auth })
    f.start!.respond = 'async'
    return f
  }
  const RESULT = '/api/result/shop/{runId}'

  it.each([
    ['one bearer async Start', [asyncFlow('import', bearer)], [{ bearerAuth: [] }], ['200', '401', '404', '429', '503']],
    ['two async Starts with one auth', [asyncFlow('a', bearer), asyncFlow('b', bearer)], [{ bearerAuth: [] }], ['200', '401', '404', '429', '503']],
    [
      'async Starts with different auth: either credential',
      [asyncFlow('a', bearer), asyncFlow('b', { type: 'apiKey', key: 'k', header: 'X-API-Key' })],
      [{ bearerAuth: [] }, { apiKeyAuth: [] }],
      ['200', '401', '404', '429', '503'],
    ],
    [
      'an open async Start beside one with auth: none needed',
      [asyncFlow('a', bearer), asyncFlow('b', null)],
      [{ bearerAuth: [] }, {}],
      ['200', '401', '404', '429', '503'],
    ],
    ['only open async Starts: security [] and no 401', [asyncFlow('a', null)], [], ['200', '404', '429', '503']],
  ] as const)('%s', async (_name, flows, security, statuses) => {
    const doc = generate([...flows, simpleFlow('sync-one', { auth: { type: 'basic', username: 'u', password: 'p' } })])
    const operation = doc.paths[RESULT]!.get!
    expect(operation.operationId).toBe('getRunResult')
    expect(operation.security).toEqual(security)
    expect(operation.parameters).toEqual([{ name: 'runId', in: 'path', description: expect.any(String), required: true, schema: { type: 'string' } }])
    expect(Object.keys(operation.responses)).toEqual(statuses)
    expect(json(operation.responses['200'])).toEqual({ $ref: '#/components/schemas/AsyncResult' })
    expect(json(operation.responses['404'])).toEqual({ $ref: '#/components/schemas/ErrorResponse' })
    expect(doc.components!.schemas!.AsyncResult).toEqual({
      type: 'object',
      properties: {
        runId: { type: 'string' },
        status: { type: 'string', enum: ['queued', 'running', 'success', 'error'] },
        response: {
          type: 'object',
          nullable: true,
          description: expect.any(String),
          properties: { status: { type: 'integer' }, body: { description: expect.any(String) } },
          required: ['status', 'body'],
        },
      },
      required: ['runId', 'status', 'response'],
    })
    await expectValidDocument(doc)
  })

  it('is absent without an async Start, and has no 429 when the rate limit is off', () => {
    const sync = generate([simpleFlow('a')])
    expect(Object.keys(sync.paths)).toEqual(['/api/run/shop/a'])
    expect(sync.components!.schemas).not.toHaveProperty('AsyncResult')
    const unlimited = generate([asyncFlow('a', bearer)], { runsPerMinutePerIp: 0 })
    expect(Object.keys(unlimited.paths[RESULT]!.get!.responses)).toEqual(['200', '401', '404', '503'])
  })

  it('keeps its name: a Start asking for it gets its slug appended', () => {
    const doc = generate([asyncFlow('a', bearer), simpleFlow('b', { operationId: 'getRunResult' })])
    expect(doc.paths[RESULT]!.get!.operationId).toBe('getRunResult')
    expect(doc.paths['/api/run/shop/b']!.post!.operationId).toBe('getRunResult_b')
  })
})

describe('End body properties that may be null', () => {
  const inputs = {
    body: {
      type: 'object',
      required: ['sku', 'meta', 'tag'],
      properties: {
        sku: { type: 'string' },
        note: { type: 'string' },
        qty: { type: 'integer', default: 1 },
        tag: { type: ['string', 'null'] },
        meta: { type: 'object', required: ['a'], properties: { a: { type: 'string' }, b: { type: 'string' } } },
      },
    },
    path: { type: 'object', properties: { id: { type: 'string' } } },
    query: { type: 'object', properties: { verbose: { type: 'boolean' } } },
    headers: { type: 'object', required: ['x-tenant'], properties: { 'x-tenant': { type: 'string' }, 'x-trace': { type: 'string' } } },
  }
  const end = (id: string, value: unknown, status = 200): NodeSpec => ({
    id,
    type: 'end',
    status,
    body: { v: value },
    schema: { type: 'object', properties: { v: { type: 'string' } } },
  })
  const graphs: Record<string, (value: unknown) => { startNext: string; nodes: NodeSpec[]; status: number }> = {
    // start -> saved (insert) -> lookup (http, onError: failed) -> done
    done: (value) => ({
      startNext: 'saved',
      status: 200,
      nodes: [
        { id: 'saved', type: 'insert', name: 'Saved', collection: 'c', document: {}, next: 'lookup' },
        { id: 'lookup', type: 'http', name: 'Lookup', url: 'http://x.test', onError: 'failed', next: 'done' },
        end('done', value),
        { id: 'failed', type: 'end', status: 503 },
      ],
    }),
    // the same flow, the End under test being the onError branch's
    failed: (value) => ({
      startNext: 'saved',
      status: 503,
      nodes: [
        { id: 'saved', type: 'insert', name: 'Saved', collection: 'c', document: {}, next: 'lookup' },
        { id: 'lookup', type: 'http', name: 'Lookup', url: 'http://x.test', onError: 'failed', next: 'done' },
        { id: 'done', type: 'end' },
        end('failed', value, 503),
      ],
    }),
    // start -> check (if) -> true: saved -> done, false: done
    branch: (value) => ({
      startNext: 'check',
      status: 200,
      nodes: [
        { id: 'check', type: 'if', name: 'Check', condition: { left: 1, op: 'eq', right: 1 }, next: { true: 'saved', false: 'done' } },
        { id: 'saved', type: 'insert', name: 'Saved', collection: 'c', document: {}, next: 'done' },
        end('done', value),
      ],
    }),
    // start -> lookup (http) -> done, and its onError branch to the same End
    shared: (value) => ({
      startNext: 'lookup',
      status: 200,
      nodes: [{ id: 'lookup', type: 'http', name: 'Lookup', url: 'http://x.test', onError: 'done', next: 'done' }, end('done', value)],
    }),
    // start -> greeting (set) -> done
    set: (value) => ({
      startNext: 'greeting',
      status: 200,
      nodes: [
        {
          id: 'greeting',
          type: 'set',
          name: 'Greeting',
          values: { text: 'Hi {{ start.note }}', raw: '{{ start.note }}', sku: '{{ start.sku }}' },
          next: 'done',
        },
        end('done', value),
      ],
    }),
  }

  it.each([
    ['a required body field', 'done', '{{ start.sku }}', false],
    ['an optional body field', 'done', '{{ start.note }}', true],
    ['an optional field with a default', 'done', '{{ start.qty }}', false],
    ['a required field whose type allows null', 'done', '{{ start.tag }}', true],
    ['a required field of a required object', 'done', '{{ start.meta.a }}', false],
    ['an optional field of a required object', 'done', '{{ start.meta.b }}', true],
    ['a field the inputs do not declare', 'done', '{{ start.nothing }}', true],
    ['a path parameter (always required)', 'done', '{{ start.id }}', false],
    ['an optional query input', 'done', '{{ start.verbose }}', true],
    ['a required header input', 'done', '{{ start.x-tenant }}', false],
    ['an optional header input', 'done', '{{ start.x-trace }}', true],
    ['an optional input inside longer text (missing is empty text)', 'done', 'note: {{ start.note }}', false],
    ['literal text', 'done', 'fixed', false],
    ['a literal number', 'done', 5, false],
    ['a literal null', 'done', null, true],
    ['an expression (its result is only known when it runs)', 'done', '{{= start.qty * 2 }}', true],
    ['run.id', 'done', '{{ run.id }}', false],
    ['run.scheduledFor (null for HTTP runs)', 'done', '{{ run.scheduledFor }}', true],
    ['a fixed output field of a node on every path', 'done', '{{ saved.insertedId }}', false],
    ['a fixed output field of an http node', 'done', '{{ lookup.status }}', false],
    ['a field of an http answer body (cannot tell)', 'done', '{{ lookup.body.count }}', true],
    ["the onError output's error, on the usual path", 'done', '{{ lookup.error }}', true],
    ["the onError output's error, on the onError branch", 'failed', '{{ lookup.error }}', false],
    ["the onError output's attempts, on the onError branch", 'failed', '{{ lookup.attempts }}', false],
    ['an http output field on the onError branch (replaced by { error, attempts })', 'failed', '{{ lookup.status }}', true],
    ['a node that ran before the failing one, on the onError branch', 'failed', '{{ saved.insertedId }}', false],
    ['error at an End reached both ways', 'shared', '{{ lookup.error }}', true],
    ['a usual field at an End reached both ways', 'shared', '{{ lookup.status }}', true],
    ['the output of a node on one branch only', 'branch', '{{ saved.insertedId }}', true],
    ['the output of the branching node itself', 'branch', '{{ check.result }}', false],
    ['a set value that is text', 'set', '{{ greeting.text }}', false],
    ['a set value bound to an optional input', 'set', '{{ greeting.raw }}', true],
    ['a set value bound to a required input', 'set', '{{ greeting.sku }}', false],
    ['a value the set node does not set', 'set', '{{ greeting.other }}', true],
  ] as const)('%s: %s', (_name, graph, value, nullable) => {
    const { startNext, nodes, status } = graphs[graph]!(value)
    const f = flow({ slug: 'bound', inputs, startNext, nodes })
    const schema = json(generate([f]).paths['/api/run/shop/bound/{id}']!.post!.responses[String(status)])!
    const own = (Array.isArray(schema.oneOf) ? (schema.oneOf as JsonSchema[]).find((s) => s.properties) : schema) as JsonSchema
    expect((own.properties as Record<string, JsonSchema>).v).toEqual(nullable ? { type: 'string', nullable: true } : { type: 'string' })
  })

  it('adds null to an enum and turns a const into one, nested properties included, and stays valid', async () => {
    const f = flow({
      slug: 'enums',
      inputs,
      startNext: 'done',
      nodes: [
        {
          id: 'done',
          type: 'end',
          body: {
            state: '{{ start.note }}',
            kind: '{{ start.note }}',
            nested: { deep: '{{ start.note }}', sure: '{{ start.sku }}' },
            open: '{{ start.note }}',
          },
          schema: {
            type: 'object',
            properties: {
              state: { type: 'string', enum: ['a', 'b'] },
              kind: { type: 'string', const: 'x' },
              nested: { type: 'object', properties: { deep: { type: 'integer' }, sure: { type: 'string' } } },
              open: { description: 'no type: already open' },
            },
          },
        },
      ],
    })
    const doc = generate([f])
    const properties = json(doc.paths['/api/run/shop/enums/{id}']!.post!.responses['200'])!.properties as Record<string, JsonSchema>
    expect(properties.state).toEqual({ type: 'string', nullable: true, enum: ['a', 'b', null] })
    expect(properties.kind).toEqual({ type: 'string', nullable: true, enum: ['x', null] })
    expect(properties.nested).toEqual({ type: 'object', properties: { deep: { type: 'integer', nullable: true }, sure: { type: 'string' } } })
    expect(properties.open).toEqual({ description: 'no type: already open' })
    // The project's own schema is left as written.
    expect((f.nodesById.get('done')!.settings.schema as { properties: { state: unknown } }).properties.state).toEqual({ type: 'string', enum: ['a', 'b'] })
    await expectValidDocument(doc)
  })
})
