// SPEC §11 row by row through app.fetch, against fixtures/webhooks with the real loader and store.
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs } from '../helpers.js'
import { startTestServer, type TestServer } from './setup.js'

const GITHUB_SECRET = "It's a Secret to Everybody"
const APP = 'https://app.example.com'
const hmac = (algorithm: string, secret: string, body: string | Uint8Array, encoding: 'hex' | 'base64' = 'hex') =>
  createHmac(algorithm, secret).update(body).digest(encoding)

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ fixture: 'webhooks' })
})

afterAll(async () => {
  await server.close()
  await cleanupTempDirs()
})

const post = (path: string, body: BodyInit, headers: Record<string, string>, method = 'POST') =>
  server.request(`/api/run/hooks/${path}`, { method, body, headers })

describe('request bodies: accept (json, form, text) and 415', () => {
  it('coerces form fields to the body schema types, repeated keys become arrays, defaults apply', async () => {
    const form = 'command=%2Fdeploy&text=api&user_name=ada&count=3&dry_run=true&tags=a&tags=b'
    const response = await post('slack-command', form, { 'content-type': 'application/x-www-form-urlencoded' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(await response.text()).toBe('Deploying api x3 for ada (dry run: true, tags: ["a","b"])')
  })

  it('wraps a single form value for an array property and applies defaults for missing fields', async () => {
    const response = await post('slack-command', 'command=/deploy&user_name=bo&tags=only', {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
    })
    expect(await response.text()).toBe('Deploying  x1 for bo (dry run: false, tags: ["only"])')
  })

  it('validates form fields like query values: a bad number, a repeated scalar and a missing field are 400', async () => {
    const response = await post('slack-command', 'command=deploy&count=many&user_name=a&user_name=b', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(response.status).toBe(400)
    const { errors } = (await response.json()) as { errors: string[] }
    expect(errors).toEqual(expect.arrayContaining(['body/command: must match pattern "^/"', 'body/count: must be integer', 'body/user_name: must be string']))
  })

  it('takes JSON too when accept lists json, uncoerced', async () => {
    const ok = await post('slack-command', JSON.stringify({ command: '/deploy', user_name: 'cy', count: 2 }), { 'content-type': 'application/json' })
    expect(await ok.text()).toContain('x2 for cy')
    const strict = await post('slack-command', JSON.stringify({ command: '/deploy', user_name: 'cy', count: '2' }), { 'content-type': 'application/json' })
    expect(strict.status).toBe(400)
  })

  it('gives a text/plain body to the flow as start.body, checked against the string schema', async () => {
    const headers = { 'content-type': 'text/plain; charset=utf-8', 'x-api-key': 'test-api-key' }
    const response = await post('note', 'buy milk & eggs', headers)
    expect(response.status).toBe(201)
    expect(await response.json()).toMatchObject({ id: expect.any(String), text: 'buy milk & eggs' })
    const tooLong = await post('note', 'x'.repeat(501), headers)
    expect(tooLong.status).toBe(400)
    expect(await tooLong.json()).toEqual({ ok: false, errors: ['body: must NOT have more than 500 characters'] })
  })

  it.each([
    ['JSON to a text flow', 'note', '{"a":1}', 'application/json', { 'x-api-key': 'test-api-key' }, 'application/json'],
    ['form to a JSON-only flow', 'github-push', 'a=1', 'application/x-www-form-urlencoded', {}, 'application/x-www-form-urlencoded'],
    ['XML to a form flow', 'sms-reply', '<x/>', 'application/xml; charset=utf-8', {}, 'application/xml'],
    ['multipart to a form flow', 'slack-command', '--b--', 'multipart/form-data; boundary=b', {}, 'multipart/form-data'],
  ])('415 for %s', async (_name, slug, body, type, extra, reported) => {
    const headers: Record<string, string> = { 'content-type': type, ...extra }
    if (slug === 'github-push') headers['x-hub-signature-256'] = `sha256=${hmac('sha256', GITHUB_SECRET, body)}`
    const response = await post(slug, body, headers)
    expect(response.status).toBe(415)
    expect(await response.json()).toEqual({ ok: false, errors: [`unsupported content type ${reported}`] })
  })

  it('415 names a missing content type; an empty body needs none', async () => {
    const response = await server.request('/api/run/hooks/slack-command', { method: 'POST', body: new Blob(['command=/x']) })
    expect(response.status).toBe(415)
    expect(await response.json()).toEqual({ ok: false, errors: ['unsupported content type (none)'] })
    const empty = await server.request('/api/run/hooks/shopify-order', {
      method: 'POST',
      headers: { 'x-shopify-hmac-sha256': hmac('sha256', 'shopify-test-secret', '', 'base64') },
    })
    expect(empty.status).toBe(202)
  })
})

describe('responses: raw non-JSON End bodies and HEAD', () => {
  it('sends a string body as it is when the End sets a non-JSON content-type (TwiML)', async () => {
    const response = await post('sms-reply', 'From=%2B4912345&Body=hello+there', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/xml')
    expect(response.headers.get('x-run-id')).toBeTruthy()
    expect(await response.text()).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Message>Got: hello there</Message></Response>')
  })

  it('echoes a verification challenge as text, not in JSON quotes', async () => {
    const response = await server.request('/api/run/hooks/challenge?challenge=abc123')
    expect(response.headers.get('content-type')).toBe('text/plain')
    expect(await response.text()).toBe('abc123')
  })

  it('answers HEAD on a GET flow as GET would, without a body; the run is recorded as HEAD', async () => {
    const get = await server.request('/api/run/hooks/challenge?challenge=abc123')
    const head = await server.request('/api/run/hooks/challenge?challenge=abc123', { method: 'HEAD' })
    expect(head.status).toBe(get.status)
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
    expect(head.headers.get('content-length')).toBe('6')
    expect(head.headers.get('x-run-id')).toBeTruthy()
    expect(await head.text()).toBe('')
    const store = (await server.workspace.storeFor('hooks'))!
    expect(await store.history.getRun('hooks', head.headers.get('x-run-id')!)).toMatchObject({ method: 'HEAD', httpStatus: 200 })
    // Validation and auth still apply, bodiless.
    const invalid = await server.request('/api/run/hooks/challenge', { method: 'HEAD' })
    expect(invalid.status).toBe(400)
    expect(await invalid.text()).toBe('')
    const unauthorized = await server.request('/api/run/hooks/profile', { method: 'HEAD' })
    expect(unauthorized.status).toBe(401)
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer realm="flowctl"')
  })

  it('lists HEAD in Allow for GET flows, and HEAD on a POST flow is 405', async () => {
    const options = await server.request('/api/run/hooks/challenge', { method: 'OPTIONS' })
    expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
    const wrong = await server.request('/api/run/hooks/note', { method: 'HEAD' })
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get('allow')).toBe('POST, OPTIONS')
  })
})

describe('CORS', () => {
  const preflight = (slug: string, origin: string, method = 'GET', requestHeaders?: string) =>
    server.request(`/api/run/hooks/${slug}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, ...(requestHeaders ? { 'access-control-request-headers': requestHeaders } : {}) },
    })

  it('answers a preflight from an allowed origin with 204 and every Access-Control header', async () => {
    const response = await preflight('profile', 'https://admin.example.com', 'GET', 'authorization, x-client')
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('https://admin.example.com')
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, HEAD')
    expect(response.headers.get('access-control-allow-headers')).toBe('Content-Type, Authorization, x-client, X-Requested-With')
    // The Start overrides origins and credentials; maxAgeSeconds comes from flowctl.yaml.
    expect(response.headers.get('access-control-max-age')).toBe('300')
    expect(response.headers.get('access-control-allow-credentials')).toBe('true')
    expect(response.headers.get('vary')).toBe('Origin')
  })

  it('gives an origin that is not listed no CORS header at all', async () => {
    const response = await preflight('profile', 'https://evil.example.net')
    expect(response.status).toBe(204)
    expect([...response.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([])
    expect(response.headers.get('vary')).toBe('Origin')
    const run = await server.request('/api/run/hooks/profile', { headers: { origin: 'https://evil.example.net', authorization: 'Bearer test-api-token' } })
    expect(run.status).toBe(200)
    expect(run.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('marks run answers to an allowed origin, errors included, and exposes X-Run-Id', async () => {
    const ok = await server.request('/api/run/hooks/profile?user=ada', { headers: { origin: APP, authorization: 'Bearer test-api-token', 'x-client': 'web' } })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP)
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true')
    expect(ok.headers.get('access-control-expose-headers')?.split(', ')).toContain('X-Run-Id')
    expect(ok.headers.get('vary')).toBe('Origin')
    expect(ok.headers.get('x-profile-version')).toBe('2')
    expect(await ok.json()).toEqual({ user: 'ada', client: 'web' })
    const denied = await server.request('/api/run/hooks/profile', { headers: { origin: APP } })
    expect(denied.status).toBe(401)
    expect(denied.headers.get('access-control-allow-origin')).toBe(APP)
  })

  it('sends "*" for a wildcard Start (no credentials), and uses the project settings elsewhere', async () => {
    const wildcard = await server.request('/api/run/hooks/challenge?challenge=x', { headers: { origin: 'https://anyone.test' } })
    expect(wildcard.headers.get('access-control-allow-origin')).toBe('*')
    expect(wildcard.headers.get('access-control-allow-credentials')).toBeNull()
    const project = await preflight('note', APP, 'POST')
    expect(project.headers.get('access-control-allow-origin')).toBe(APP)
    expect(project.headers.get('access-control-allow-headers')).toBe('Content-Type, X-API-Key, X-Requested-With')
    expect(project.headers.get('access-control-allow-credentials')).toBeNull()
    const admin = await preflight('note', 'https://admin.example.com', 'POST')
    expect(admin.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('never sends a wildcard from /api/openapi', async () => {
    const response = await server.request('/api/openapi/hooks', { headers: { origin: 'https://anyone.test' } })
    expect(response.status).toBe(401)
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('signed webhooks: auth type hmac', () => {
  const push = JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'o/r' } })
  const github = (body: string, signature: string | null) =>
    post('github-push', body, {
      'content-type': 'application/json',
      'x-github-event': 'push',
      ...(signature === null ? {} : { 'x-hub-signature-256': signature }),
    })

  it('accepts GitHub signatures over the raw bytes (sha256=<hex>, any hex case)', async () => {
    const signature = `sha256=${hmac('sha256', GITHUB_SECRET, push)}`
    const response = await github(push, signature)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ ok: true, event: 'push', ref: 'refs/heads/main' })
    expect((await github(push, signature.toUpperCase().replace('SHA256=', 'sha256='))).status).toBe(200)
  })

  it.each([
    ['no signature', () => null],
    ['a wrong signature', () => `sha256=${hmac('sha256', 'another secret', push)}`],
    ['the signature of other bytes (whitespace changed)', () => `sha256=${hmac('sha256', GITHUB_SECRET, push + ' ')}`],
    ['a missing prefix', () => hmac('sha256', GITHUB_SECRET, push)],
    ['an empty value', () => ''],
  ])('401 with %s, before the body is parsed', async (_name, signature) => {
    const response = await github(push, signature())
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Signature header="X-Hub-Signature-256"')
    expect(await response.json()).toEqual({ ok: false, errors: [signature() === null ? 'missing credential' : 'invalid signature'] })
  })

  it('checks the signature before the body: bad JSON with a bad signature is 401, with a good one 400', async () => {
    expect((await github('{not json', 'sha256=00')).status).toBe(401)
    expect((await github('{not json', `sha256=${hmac('sha256', GITHUB_SECRET, '{not json')}`)).status).toBe(400)
  })

  it('supports sha1, sha512 and base64 signatures and text bodies', async () => {
    const legacy = await post('legacy-hook', '{}', {
      'content-type': 'application/json',
      'x-hub-signature': `sha1=${hmac('sha1', 'legacy-sha1-secret', '{}')}`,
    })
    expect(legacy.status).toBe(200)
    const text = 'päyload'
    const partner = await post(
      'partner-hook',
      text,
      { 'content-type': 'text/plain', 'x-partner-signature': hmac('sha512', 'partner-sha512-secret', Buffer.from(text)) },
      'PUT',
    )
    expect(partner.status).toBe(200)
    expect(await partner.text()).toBe('received päyload')
    const shopify = await post('shopify-order', '{"id":1}', {
      'content-type': 'application/json',
      'x-shopify-hmac-sha256': hmac('sha256', 'shopify-test-secret', '{"id":1}', 'base64'),
    })
    expect(shopify.status).toBe(202)
  })

  it('fails closed when the secret is empty or unresolved', async () => {
    const empty = await startTestServer({ fixture: 'webhooks', env: 'GITHUB_WEBHOOK_SECRET=\n' })
    try {
      // The HMAC of the body under an empty key is easy to forge: it must not pass.
      const response = await empty.request('/api/run/hooks/github-push', {
        method: 'POST',
        body: push,
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmac('sha256', '', push)}` },
      })
      expect(response.status).toBe(401)
    } finally {
      await empty.close()
    }
  })

  it('413 for a body over the limit before the signature is checked', async () => {
    const big = JSON.stringify({ ref: 'x'.repeat(1_100_000) })
    const response = await github(big, 'sha256=00')
    expect(response.status).toBe(413)
  })
})

describe('http: false', () => {
  it('has no route (404) but flowctl run and schedules still run it', async () => {
    const response = await post('nightly-sync', '{}', { 'content-type': 'application/json' })
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ ok: false, errors: ['flow not found'] })
    expect((await server.request('/api/run/hooks/nightly-sync', { method: 'OPTIONS' })).status).toBe(404)
  })
})
