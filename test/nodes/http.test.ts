import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpNode } from '../../src/nodes/http.js'
import { nodeContext } from './context.js'
import { closedPortUrl, startLocalServer, type LocalServer } from './local-server.js'

let server: LocalServer
beforeAll(async () => {
  server = await startLocalServer()
})
afterAll(async () => {
  await server.close()
})

const scope = { start: { sku: 'A-1', qty: 2 } }

describe('http node', () => {
  it('GETs a URL built from references and parses a JSON answer', async () => {
    const spec = {
      id: 'h',
      type: 'http',
      url: `${server.url}/echo?sku={{start.sku}}`,
      headers: { 'X-Qty': '{{start.qty}}', Authorization: 'Bearer ${secrets.API}' },
    }
    const { output } = await httpNode.execute(nodeContext(spec, { scope, secrets: { API: 'api-key-1' } }))
    const { status, headers, body } = output as { status: number; headers: Record<string, string>; body: Record<string, unknown> }
    expect(status).toBe(200)
    expect(headers['content-type']).toBe('application/json')
    expect(body).toMatchObject({ method: 'GET', path: '/echo', query: '?sku=A-1', body: '' })
    expect(body.headers).toMatchObject({ 'x-qty': '2', authorization: 'Bearer api-key-1' })
  })

  it('sends an object body as JSON with a content type', async () => {
    const spec = { id: 'h', type: 'http', method: 'post', url: `${server.url}/echo`, body: { sku: '{{start.sku}}', qty: '{{start.qty}}' } }
    const body = (await httpNode.execute(nodeContext(spec, { scope }))).output as { body: { method: string; body: string; headers: Record<string, string> } }
    expect(body.body.method).toBe('POST')
    expect(JSON.parse(body.body.body)).toEqual({ sku: 'A-1', qty: 2 })
    expect(body.body.headers['content-type']).toBe('application/json')
  })

  it('keeps a text answer as text, and any HTTP status is a success', async () => {
    const { output } = await httpNode.execute(nodeContext({ id: 'h', type: 'http', url: `${server.url}/text` }))
    expect(output).toMatchObject({ status: 418, body: 'short and stout', headers: { 'x-kind': 'teapot' } })
  })

  it('fails on a network error', async () => {
    const url = await closedPortUrl()
    await expect(httpNode.execute(nodeContext({ id: 'h', type: 'http', url }))).rejects.toThrow('HTTP GET request network error (ECONNREFUSED)')
  })

  it('fails after its timeout', async () => {
    const began = Date.now()
    const call = httpNode.execute(nodeContext({ id: 'h', type: 'http', url: `${server.url}/hang`, timeoutMs: 150 }))
    await expect(call).rejects.toThrow('HTTP GET request timed out after 150 ms')
    expect(Date.now() - began).toBeLessThan(3000)
  })

  it('stops when the run is aborted', async () => {
    const controller = new AbortController()
    const call = httpNode.execute(nodeContext({ id: 'h', type: 'http', url: `${server.url}/hang` }, { signal: controller.signal }))
    setTimeout(() => controller.abort(new Error('timeout')), 50)
    await expect(call).rejects.toThrow('HTTP GET request stopped with the run')
  })

  it('fails on a URL that is not one (a missing reference resolves to null)', async () => {
    await expect(httpNode.execute(nodeContext({ id: 'h', type: 'http', url: '{{start.missing}}' }, { scope }))).rejects.toThrow(
      'HTTP GET request has an invalid URL ""',
    )
  })
})

describe('http node: query, url values, form, failOnStatus', () => {
  const hostile = { start: { q: 'a&admin=1#x', id: '../admin', dot: '..', name: 'Zoë Ω', list: ['x', 'y z'] } }
  const echo = async (spec: Record<string, unknown>) => {
    const { output } = await httpNode.execute(nodeContext({ id: 'h', type: 'http', ...spec }, { scope: hostile }))
    return (output as { body: { method: string; path: string; query: string; headers: Record<string, string>; body: string } }).body
  }

  const urlCases: [string, string, { path?: string; query?: string }][] = [
    ['a query value cannot add a parameter or a fragment', '/echo?q={{ start.q }}', { path: '/echo', query: '?q=a%26admin%3D1%23x' }],
    ['a path value cannot add a segment', '/echo/{{ start.id }}', { path: '/echo/..%2Fadmin', query: '' }],
    ['text is percent-encoded in the path', '/echo/{{ start.name }}', { path: '/echo/Zo%C3%AB%20%CE%A9' }],
    ['an expression value is encoded the same way', '/echo?q={{= start.q }}', { query: '?q=a%26admin%3D1%23x' }],
    ['a value inside a path segment', '/echo/item-{{ start.dot }}', { path: '/echo/item-..' }],
  ]
  for (const [name, path, expected] of urlCases) {
    it(name, async () => {
      const flowSpec = { url: `${server.url}${path}` }
      // Expressions are evaluated by the engine before a node runs; this test resolves the same value.
      if (path.includes('{{=')) {
        const body = await echoWithExpression(flowSpec.url)
        expect(body).toMatchObject(expected)
        return
      }
      expect(await echo(flowSpec)).toMatchObject(expected)
    })
  }

  it('refuses "." or ".." as a whole path segment', async () => {
    await expect(echo({ url: `${server.url}/echo/{{ start.dot }}/x` })).rejects.toThrow('HTTP GET request has the value ".." as a segment of its url path')
  })

  it('refuses a value in the host, even when it looks harmless', async () => {
    await expect(echo({ url: 'http://{{ start.dot }}/x' })).rejects.toThrow('has a {{ }} value in the scheme, host or port of its url')
  })

  it('allows only http and https for a whole-value url', async () => {
    const call = httpNode.execute(nodeContext({ id: 'h', type: 'http', url: '{{ start.u }}' }, { scope: { start: { u: 'file:///etc/passwd' } } }))
    await expect(call).rejects.toThrow('only http and https URLs can be called')
  })

  it('query: each value URL-encoded, lists repeat the key, null is left out', async () => {
    const body = await echo({ url: `${server.url}/echo?fixed=1`, query: { q: '{{ start.q }}', tag: '{{ start.list }}', none: null, n: 2 } })
    expect(body.query).toBe('?fixed=1&q=a%26admin%3D1%23x&tag=x&tag=y+z&n=2')
  })

  it('form: sent as application/x-www-form-urlencoded', async () => {
    const body = await echo({ method: 'post', url: `${server.url}/echo`, form: { q: '{{ start.q }}', name: '{{ start.name }}' } })
    expect(body.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(Object.fromEntries(new URLSearchParams(body.body))).toEqual({ q: 'a&admin=1#x', name: 'Zoë Ω' })
  })

  const statusCases: [string, number, boolean, 'output' | 'fails', boolean][] = [
    ['404 is output by default', 404, false, 'output', false],
    ['503 is output by default, marked retryable', 503, false, 'output', true],
    ['429 is marked retryable', 429, false, 'output', true],
    ['404 fails with failOnStatus', 404, true, 'fails', false],
    ['500 fails with failOnStatus', 500, true, 'fails', false],
    ['200 never fails', 200, true, 'output', false],
  ]
  for (const [name, status, failOnStatus, expected, retryable] of statusCases) {
    it(name, async () => {
      const call = httpNode.execute(nodeContext({ id: 'h', type: 'http', url: `${server.url}/status/${status}`, failOnStatus }))
      if (expected === 'fails') {
        await expect(call).rejects.toThrow(`HTTP GET request answered ${status}`)
        return
      }
      const result = await call
      expect(result.output).toMatchObject({ status, body: { status } })
      expect(Boolean(result.retryable)).toBe(retryable)
    })
  }
})

/** A url with an expression: evaluated the way the engine does before the node runs. */
async function echoWithExpression(url: string): Promise<Record<string, unknown>> {
  const { buildFlow } = await import('../flow/build.js')
  const { createScope, evaluateNodeExpressions, resolveParts, createResolver, templateCacheOf } = await import('../../src/language/resolve.js')
  const flow = buildFlow('Expr Url', [{ id: 'h', type: 'http', url }])
  const node = flow.nodes[0]!
  const scope = Object.assign(createScope({ id: 'r', startedAt: '', trigger: 'cli' }), { start: { q: 'a&admin=1#x' } })
  const values = new Map()
  await evaluateNodeExpressions(flow, node, scope, { expressionMs: 2_000, textChars: 1_000_000, arrayItems: 100_000 }, values)
  const context = {
    ...nodeContext({ id: 'h', type: 'http', url }),
    node,
    resolve: createResolver(flow, scope, new Map(), values),
    resolveParts: (text: string) => resolveParts(text, scope, new Map(), templateCacheOf(flow), values),
  }
  const { output } = await httpNode.execute(context)
  return (output as { body: Record<string, unknown> }).body
}
