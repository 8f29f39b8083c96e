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
    const spec = { id: 'h', type: 'http', url: `${server.url}/echo?sku={{start.sku}}`, headers: { 'X-Qty': '{{start.qty}}', Authorization: 'Bearer ${secrets.API}' } }
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
