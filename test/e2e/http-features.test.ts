// SPEC §11 end to end: the real `flowctl serve` on fixtures/webhooks, and a contract test that
// drives every operation of the document `flowctl export-openapi` writes, with valid and invalid
// inputs, and finds no status or header the document does not declare.
import { createHmac } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, startServe } from '../helpers.js'

const GITHUB_SECRET = "It's a Secret to Everybody"
const APP = 'https://app.example.com'

let project: string
let base: string
let server: ResultPromise

beforeAll(async () => {
  project = await copyFixture('webhooks')
  const started = await startServe([project, '--host', '127.0.0.1', '--quiet'])
  server = started.child
  base = started.base
}, 30_000)

afterAll(async () => {
  if (server.exitCode === null) server.kill('SIGKILL')
  await cleanupTempDirs()
})

describe('SPEC §11 through the real server', () => {
  it('form body in, plain text out', async () => {
    const response = await fetch(`${base}/api/run/hooks/slack-command`, {
      method: 'POST',
      body: new URLSearchParams([
        ['command', '/deploy'],
        ['text', 'web'],
        ['user_name', 'ada'],
        ['count', '2'],
        ['tags', 'x'],
        ['tags', 'y'],
      ]),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(await response.text()).toBe('Deploying web x2 for ada (dry run: false, tags: ["x","y"])')
  })

  it('415 for a type the Start does not accept', async () => {
    const response = await fetch(`${base}/api/run/hooks/sms-reply`, { method: 'POST', body: '{"From":"x"}', headers: { 'content-type': 'application/json' } })
    expect(response.status).toBe(415)
    expect(await response.json()).toEqual({ ok: false, errors: ['unsupported content type application/json'] })
  })

  it('XML sent as it is, HEAD without a body', async () => {
    const xml = await fetch(`${base}/api/run/hooks/sms-reply`, { method: 'POST', body: new URLSearchParams({ From: '+1', Body: 'hi' }) })
    expect(xml.headers.get('content-type')).toBe('application/xml')
    expect(await xml.text()).toContain('<Message>Got: hi</Message>')
    const head = await fetch(`${base}/api/run/hooks/challenge?challenge=hello`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe('5')
    expect(await head.text()).toBe('')
  })

  it('hmac over the bytes as received (Node request path), text bodies too', async () => {
    const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main' }) + '\n')
    const signature = `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`
    const ok = await fetch(`${base}/api/run/hooks/github-push`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature, 'x-github-event': 'push' },
    })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ ok: true, event: 'push', ref: 'refs/heads/main' })
    const tampered = await fetch(`${base}/api/run/hooks/github-push`, {
      method: 'POST',
      body: body.subarray(0, -1),
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
    })
    expect(tampered.status).toBe(401)
  })

  it('CORS preflight and run answers to an allowed origin', async () => {
    const preflight = await fetch(`${base}/api/run/hooks/profile`, { method: 'OPTIONS', headers: { origin: APP, 'access-control-request-method': 'GET' } })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP)
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true')
    expect(preflight.headers.get('vary')).toBe('Origin')
    const run = await fetch(`${base}/api/run/hooks/profile`, { headers: { origin: APP, authorization: 'Bearer test-api-token' } })
    expect(run.headers.get('access-control-allow-origin')).toBe(APP)
    expect(run.headers.get('access-control-expose-headers')?.split(', ')).toContain('X-Run-Id')
  })

  it('http: false is a 404 over HTTP, while `flowctl run` and `flowctl tick` run it', async () => {
    expect((await fetch(`${base}/api/run/hooks/nightly-sync`, { method: 'POST' })).status).toBe(404)
    const run = await flowctl(['run', 'nightly-sync', '--project', project, '--json'])
    expect(run.exitCode).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 200, body: { synced: 'manual' } })
    const tick = await flowctl(['tick', '--project', project, '--at', '2026-11-21T02:00:10Z', '--json'])
    expect(JSON.parse(tick.stdout)).toMatchObject({ ran: 1, errors: 0 })
  })

  it('`flowctl run` gives a text-only Start its --body as text, and prints a text answer as it is', async () => {
    const json = await flowctl(['run', 'note', '--project', project, '--body', 'not { json', '--json'])
    expect(json.exitCode).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 201, body: { text: 'not { json' } })
    const human = await flowctl(['run', 'partner-hook', '--project', project, '--body', 'hello'])
    expect(human.exitCode).toBe(0)
    expect(human.stdout.split('\n')[1]).toBe('received hello')
    // JSON Starts still want JSON.
    const bad = await flowctl(['run', 'github-push', '--project', project, '--body', 'not { json'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('--body is not valid JSON')
  })
})

// ---- contract test -------------------------------------------------------------------------

type Schema = Record<string, unknown>
interface Operation {
  operationId: string
  security: Record<string, string[]>[]
  parameters?: { name: string; in: 'path' | 'query' | 'header'; required: boolean; schema: Schema }[]
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> }
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>
}
interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes: Record<string, { type: string; scheme?: string; name?: string }> }
}

/** Headers every HTTP answer may carry, which OpenAPI leaves out (Content-Type is the media type). */
const TRANSPORT = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'])

/** The credentials of fixtures/webhooks/.env, by security scheme. */
function credential(scheme: string, body: Buffer): Record<string, string> {
  const sign = (algorithm: string, secret: string, encoding: 'hex' | 'base64') => createHmac(algorithm, secret).update(body).digest(encoding)
  switch (scheme) {
    case 'bearerAuth':
      return { authorization: 'Bearer test-api-token' }
    case 'basicAuth':
      return { authorization: `Basic ${Buffer.from('alice:wonderland').toString('base64')}` }
    case 'apiKeyAuth':
      return { 'x-api-key': 'test-api-key' }
    case 'hmacAuth_X-Hub-Signature-256':
      return { 'x-hub-signature-256': `sha256=${sign('sha256', GITHUB_SECRET, 'hex')}` }
    case 'hmacAuth_X-Hub-Signature':
      return { 'x-hub-signature': `sha1=${sign('sha1', 'legacy-sha1-secret', 'hex')}` }
    case 'hmacAuth_X-Partner-Signature':
      return { 'x-partner-signature': sign('sha512', 'partner-sha512-secret', 'hex') }
    case 'hmacAuth_X-Shopify-Hmac-Sha256':
      return { 'x-shopify-hmac-sha256': sign('sha256', 'shopify-test-secret', 'base64') }
    default:
      throw new Error(`no test credential for security scheme ${scheme}`)
  }
}

/** A value the schema accepts: example, default, first enum value, or the simplest of its type (required properties only). */
function sample(schema: Schema): unknown {
  if ('example' in schema) return schema.example
  if ('default' in schema) return schema.default
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null)
  if (Array.isArray(schema.oneOf)) return sample(schema.oneOf[0] as Schema)
  switch (schema.type) {
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum + (schema.exclusiveMinimum ? 1 : 0) : 1
    case 'boolean':
      return true
    case 'array':
      return []
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      return Object.fromEntries(((schema.required ?? []) as string[]).map((name) => [name, sample(properties[name] ?? {})]))
    }
    case 'string': {
      if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000'
      if (schema.format === 'email') return 'ada@shop.test'
      const candidates = ['x', '/x', 'a-1'].map((c) => c.padEnd(Number(schema.minLength ?? 1), 'x'))
      return typeof schema.pattern === 'string' ? candidates.find((c) => new RegExp(schema.pattern as string).test(c)) : candidates[0]
    }
    default:
      return 'x'
  }
}

function encode(mediaType: string, value: unknown): string {
  if (mediaType === 'application/json') return JSON.stringify(value)
  if (mediaType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams()
    for (const [name, v] of Object.entries(value as Record<string, unknown>)) for (const item of Array.isArray(v) ? v : [v]) form.append(name, String(item))
    return form.toString()
  }
  return String(value)
}

interface Case {
  name: string
  mediaType?: string
  body?: string
  /** Leave out the credential, a required parameter, or send an origin. */
  noAuth?: boolean
  dropRequiredParameter?: boolean
  origin?: string
  expectStatus: (status: number) => boolean
}

function casesFor(method: string, operation: Operation): Case[] {
  const ok = (status: number) => status < 300
  const cases: Case[] = []
  const content = operation.requestBody?.content ?? {}
  const mediaTypes = Object.keys(content)
  for (const mediaType of mediaTypes.length ? mediaTypes : [undefined]) {
    const body = mediaType ? encode(mediaType, sample(content[mediaType]!.schema)) : undefined
    cases.push({ name: `valid ${mediaType ?? 'without body'}`, mediaType, body, expectStatus: ok })
    cases.push({ name: `valid from an allowed origin`, mediaType, body, origin: APP, expectStatus: ok })
    cases.push({ name: `valid from another origin`, mediaType, body, origin: 'https://evil.test', expectStatus: ok })
    if (operation.security.length) cases.push({ name: 'without credential', mediaType, body, noAuth: true, expectStatus: (s) => s === 401 })
    if (operation.parameters?.some((p) => p.required && p.in !== 'path'))
      cases.push({ name: 'missing required parameter', mediaType, body, dropRequiredParameter: true, expectStatus: (s) => s === 400 })
  }
  // Every method but GET reads a body (not read from the document, so a missing 415 is caught).
  if (method !== 'get') {
    cases.push({ name: 'unsupported content type', mediaType: 'application/vnd.unknown', body: '<x/>', expectStatus: (s) => s === 415 })
    cases.push({ name: 'body over the limit', mediaType: mediaTypes[0] ?? 'application/json', body: 'x'.repeat(1_048_577), expectStatus: (s) => s === 413 })
    const json = content['application/json'] ?? content['application/x-www-form-urlencoded']
    if (json && Array.isArray(json.schema.required) && json.schema.required.length) {
      cases.push({ name: 'body missing required fields', mediaType: mediaTypes[0], body: encode(mediaTypes[0]!, {}), expectStatus: (s) => s === 400 })
    }
  }
  return cases
}

/** Drives every operation of the document; returns what the server answered that it does not declare. */
async function drive(doc: Document): Promise<{ findings: string[]; requests: number }> {
  const findings: string[] = []
  let requests = 0
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const c of casesFor(method, operation)) {
        let path = template
        const query = new URLSearchParams()
        const headers: Record<string, string> = {}
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(sample(parameter.schema))))
          else if (parameter.required && !c.dropRequiredParameter) {
            const value = String(sample(parameter.schema))
            if (parameter.in === 'query') query.set(parameter.name, value)
            else headers[parameter.name] = value
          }
        }
        if (c.mediaType) headers['content-type'] = c.mediaType
        if (c.origin) headers.origin = c.origin
        const bytes = Buffer.from(c.body ?? '')
        if (!c.noAuth)
          for (const requirement of operation.security) for (const scheme of Object.keys(requirement)) Object.assign(headers, credential(scheme, bytes))
        const url = `${base}${path}${query.size ? `?${query}` : ''}`
        const response = await fetch(url, { method: method.toUpperCase(), headers, ...(c.body !== undefined ? { body: bytes } : {}) })
        requests++
        const where = `${method.toUpperCase()} ${template} (${c.name}) → ${response.status}`
        const declared = operation.responses[String(response.status)]
        const text = await response.text()
        if (!c.expectStatus(response.status)) findings.push(`${where}: unexpected status (${text.slice(0, 200)})`)
        if (!declared) {
          findings.push(`${where}: status not in the document`)
          continue
        }
        const names = new Set(Object.keys(declared.headers ?? {}).map((n) => n.toLowerCase()))
        for (const name of response.headers.keys()) if (!TRANSPORT.has(name) && !names.has(name)) findings.push(`${where}: header ${name} not declared`)
        const type = response.headers.get('content-type')?.split(';')[0]?.trim()
        if (text !== '' && (!type || !Object.keys(declared.content ?? {}).includes(type))) findings.push(`${where}: content type ${type} not declared`)
      }
    }
  }
  return { findings, requests }
}

describe('contract: the live server against its exported document', () => {
  let doc: Document

  beforeAll(async () => {
    const out = join(project, 'openapi.json')
    const exported = await flowctl(['export-openapi', '--project', project, '--out', out, '--server-url', base])
    expect(exported.exitCode).toBe(0)
    doc = JSON.parse(await readFile(out, 'utf8')) as Document
  })

  it('answers every operation, valid and invalid inputs, only with declared statuses and headers', async () => {
    const { findings, requests } = await drive(doc)
    expect(findings).toEqual([])
    // Every operation was driven, several ways each.
    expect(Object.keys(doc.paths)).toHaveLength(11)
    expect(requests).toBeGreaterThan(60)
  }, 120_000)

  it('is not vacuous: a document missing a status, a header or a media type is caught', async () => {
    const shrunk = structuredClone(doc)
    delete shrunk.paths['/api/run/hooks/note']!.post!.responses['415']
    delete shrunk.paths['/api/run/hooks/profile']!.get!.responses['200']!.headers!['Vary']
    shrunk.paths['/api/run/hooks/sms-reply']!.post!.responses['200']!.content = { 'application/json': {} }
    const { findings } = await drive(shrunk)
    expect(findings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^POST \/api\/run\/hooks\/note \(unsupported content type\) → 415: status not in the document/),
        expect.stringMatching(/^GET \/api\/run\/hooks\/profile .* → 200: header vary not declared/),
        expect.stringMatching(/^POST \/api\/run\/hooks\/sms-reply .* → 200: content type application\/xml not declared/),
      ]),
    )
  }, 120_000)
})
