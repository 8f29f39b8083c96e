// Pure parts of the HTTP layer: body reading, auth, the rate limiter, run paths, escaping.
import { describe, expect, it } from 'vitest'
import { checkRunAuth, secretEquals } from '../../src/http/auth.js'
import { isJsonContentType, MAX_JSON_DEPTH, nestingDepth, parseJsonText, readJsonBody } from '../../src/http/body.js'
import { isLoopback } from '../../src/http/client.js'
import { escapeHtml, html } from '../../src/http/html.js'
import { RateLimiter } from '../../src/http/rate-limit.js'
import { parseRunPath, queryRecord } from '../../src/http/run-path.js'

const secrets = new Map([
  ['TOKEN', 's3cret-token'],
  ['USER', 'alice'],
  ['PASS', 'pa:ss'],
  ['EMPTY', ''],
])

function headers(values: Record<string, string>): Headers {
  return new Headers(values)
}

describe('checkRunAuth', () => {
  const bearer = { type: 'bearer' as const, token: '${secrets.TOKEN}' }
  const basic = { type: 'basic' as const, username: '${secrets.USER}', password: '${secrets.PASS}' }
  const apiKey = { type: 'apiKey' as const, key: '${secrets.TOKEN}', header: 'X-API-Key' }
  const basicOf = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`

  it.each([
    ['no auth', null, {}, true],
    ['bearer right', bearer, { authorization: 'Bearer s3cret-token' }, true],
    ['bearer scheme is case-insensitive', bearer, { authorization: 'bearer s3cret-token' }, true],
    ['bearer wrong', bearer, { authorization: 'Bearer s3cret-tokeN' }, false],
    ['bearer prefix of the token', bearer, { authorization: 'Bearer s3cret' }, false],
    ['bearer missing', bearer, {}, false],
    ['bearer as basic scheme', bearer, { authorization: 'Basic s3cret-token' }, false],
    ['basic right', basic, { authorization: basicOf('alice', 'pa:ss') }, true],
    ['basic wrong password', basic, { authorization: basicOf('alice', 'pass') }, false],
    ['basic wrong user', basic, { authorization: basicOf('bob', 'pa:ss') }, false],
    ['basic garbage', basic, { authorization: 'Basic !!!' }, false],
    ['basic missing', basic, {}, false],
    ['apiKey right', apiKey, { 'x-api-key': 's3cret-token' }, true],
    ['apiKey wrong', apiKey, { 'x-api-key': 'nope' }, false],
    ['apiKey in the wrong header', apiKey, { authorization: 'Bearer s3cret-token' }, false],
    ['apiKey custom header', { ...apiKey, header: 'X-Key' }, { 'x-key': 's3cret-token' }, true],
    ['empty expected token', { type: 'bearer' as const, token: '' }, { authorization: 'Bearer ' }, false],
    ['expected secret empty', { type: 'bearer' as const, token: '${secrets.EMPTY}' }, { authorization: 'Bearer x' }, false],
    ['unresolved secret', { type: 'bearer' as const, token: '${secrets.MISSING}' }, { authorization: 'Bearer ' }, false],
    ['unresolved secret, literal guess', { type: 'bearer' as const, token: '${secrets.MISSING}' }, { authorization: 'Bearer ${secrets.MISSING}' }, false],
    ['basic with unresolved password', { ...basic, password: '${secrets.NOPE}' }, { authorization: basicOf('alice', '') }, false],
  ])('%s', (_, auth, given, ok) => {
    const decision = checkRunAuth(auth, headers(given), secrets)
    expect(decision.ok).toBe(ok)
  })

  it('names the scheme in the challenge', () => {
    const missing = 'missing credential'
    expect(checkRunAuth(bearer, headers({}), secrets)).toEqual({ ok: false, challenge: 'Bearer realm="flowctl"', reason: missing })
    expect(checkRunAuth(basic, headers({}), secrets)).toEqual({ ok: false, challenge: 'Basic realm="flowctl"', reason: missing })
    expect(checkRunAuth(apiKey, headers({}), secrets)).toEqual({ ok: false, challenge: 'ApiKey header="X-API-Key"', reason: missing })
  })

  it('checks against the secrets map it is given: a reloaded .env (a new map) replaces the old token at once', () => {
    const before = new Map([['TOKEN', 'old-token']])
    const after = new Map([['TOKEN', 'new-token']])
    expect(checkRunAuth(bearer, headers({ authorization: 'Bearer old-token' }), before).ok).toBe(true)
    expect(checkRunAuth(bearer, headers({ authorization: 'Bearer old-token' }), after).ok).toBe(false)
    expect(checkRunAuth(bearer, headers({ authorization: 'Bearer new-token' }), after).ok).toBe(true)
    expect(checkRunAuth(bearer, headers({ authorization: 'Bearer new-token' }), before).ok).toBe(false)
    expect(checkRunAuth(bearer, headers({ authorization: 'Bearer ' }), new Map([['TOKEN', '']])).ok).toBe(false)
  })

  it('compares strings of different lengths without throwing', () => {
    expect(secretEquals('a', 'a much longer expected value')).toBe(false)
    expect(secretEquals('same', 'same')).toBe(true)
  })
})

describe('JSON bodies', () => {
  const request = (body: string | undefined, type = 'application/json', extra: Record<string, string> = {}) =>
    new Request('http://x/', { method: 'POST', body, headers: { 'content-type': type, ...extra } })

  it('accepts application/json and +json types only', () => {
    expect(isJsonContentType('application/json')).toBe(true)
    expect(isJsonContentType('application/json; charset=utf-8')).toBe(true)
    expect(isJsonContentType('application/vnd.api+json')).toBe(true)
    expect(isJsonContentType('text/plain')).toBe(false)
    expect(isJsonContentType('application/x-www-form-urlencoded')).toBe(false)
    expect(isJsonContentType(null)).toBe(false)
  })

  it('reads an empty body as undefined whatever its type', async () => {
    expect(await readJsonBody(request(undefined, 'text/plain'), 100)).toEqual({ ok: true, body: undefined })
  })

  it('rejects a non-JSON content type with 415, malformed JSON and invalid UTF-8 with 400', async () => {
    expect(await readJsonBody(request('{"a":1}', 'text/plain'), 100)).toEqual({
      ok: false,
      status: 415,
      error: 'unsupported content type text/plain',
    })
    expect(await readJsonBody(request('{"a":'), 100)).toEqual({ ok: false, status: 400, error: 'body: is not valid JSON' })
    const bad = new Request('http://x/', { method: 'POST', body: new Uint8Array([0x7b, 0xff, 0x7d]), headers: { 'content-type': 'application/json' } })
    expect(await readJsonBody(bad, 100)).toMatchObject({ ok: false, status: 400 })
  })

  it('rejects a body over the limit by its Content-Length and by the bytes streamed', async () => {
    expect(await readJsonBody(request(JSON.stringify({ a: 'x'.repeat(200) })), 100)).toEqual({
      ok: false,
      status: 413,
      error: 'body exceeds 100 bytes',
    })
    // A lying (small) Content-Length does not help: the streamed bytes are counted.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]'))
        controller.close()
      },
    })
    const streamed = new Request('http://x/', { method: 'POST', body: stream, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit)
    expect(await readJsonBody(streamed, 100)).toMatchObject({ ok: false, status: 413 })
  })

  it('drops __proto__ and constructor keys at every depth', () => {
    const parsed = parseJsonText('{"__proto__":{"polluted":1},"a":{"constructor":{"prototype":{"x":1}},"b":2}}')
    expect(parsed).toEqual({ ok: true, body: { a: { b: 2 } } })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getPrototypeOf((parsed as { body: object }).body)).toBe(Object.prototype)
  })

  it('drops __proto__ and constructor keys written with \\u escapes', () => {
    const parsed = parseJsonText('{"\\u005f_proto__":{"polluted":1},"a":{"constr\\u0075ctor":1,"b":2}}')
    expect(parsed).toEqual({ ok: true, body: { a: { b: 2 } } })
    expect(Object.getPrototypeOf((parsed as { body: object }).body)).toBe(Object.prototype)
    // Texts without such keys parse as they are.
    expect(parseJsonText('{"a":[1,{"b":"x"}]}')).toEqual({ ok: true, body: { a: [1, { b: 'x' }] } })
  })

  it('rejects deep nesting before parsing, and counts brackets inside strings as text', () => {
    expect(nestingDepth('[[["[[[[["]]]')).toBe(3)
    expect(nestingDepth('{"a":"\\"[[["}')).toBe(1)
    expect(parseJsonText('['.repeat(100_000) + ']'.repeat(100_000))).toMatchObject({ ok: false, status: 400 })
    const ok = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH)
    expect(parseJsonText(ok)).toMatchObject({ ok: true })
  })
})

describe('RateLimiter', () => {
  it('allows the limit per minute, then answers with the seconds left in the window', () => {
    let now = 120_000 + 45_500 // 45.5 s into a minute
    const limiter = new RateLimiter(() => now)
    for (let i = 0; i < 3; i++) expect(limiter.hit('p', '1.2.3.4', 3)).toEqual({ allowed: true })
    expect(limiter.hit('p', '1.2.3.4', 3)).toEqual({ allowed: false, retryAfterSeconds: 15 })
    expect(limiter.hit('p', '5.6.7.8', 3)).toEqual({ allowed: true })
    expect(limiter.hit('other', '1.2.3.4', 3)).toEqual({ allowed: true })
    now = 120_000 + 59_999
    expect(limiter.hit('p', '1.2.3.4', 3)).toEqual({ allowed: false, retryAfterSeconds: 1 })
    now = 180_000 // the next window
    expect(limiter.hit('p', '1.2.3.4', 3)).toEqual({ allowed: true })
    expect(limiter.size).toBe(1) // old windows are dropped
  })

  it('is off with a limit of 0', () => {
    const limiter = new RateLimiter(() => 0)
    for (let i = 0; i < 1000; i++) expect(limiter.hit('p', 'ip', 0).allowed).toBe(true)
    expect(limiter.size).toBe(0)
  })
})

describe('parseRunPath', () => {
  it.each([
    ['/api/run/shop/quote', { projectId: 'shop', slug: 'quote', params: [] }],
    ['/api/run/shop/order-status/open', { projectId: 'shop', slug: 'order-status', params: ['open'] }],
    ['/api/run/shop/order-status/a%2Fb', { projectId: 'shop', slug: 'order-status', params: ['a/b'] }],
    ['/api/run/shop/order-status/..%2F..%2Fetc', { projectId: 'shop', slug: 'order-status', params: ['../../etc'] }],
    ['/api/run/shop/order-status/caf%C3%A9', { projectId: 'shop', slug: 'order-status', params: ['café'] }],
    ['/api/run/shop', null],
    ['/api/run/shop/', null],
    ['/api/run/shop//x', null],
    ['/api/run/shop/x/%E0%A4%A', null],
    ['/api/other/shop/x', null],
  ])('%s', (path, expected) => {
    expect(parseRunPath(path)).toEqual(expected)
  })

  it('builds query records with arrays for repeated names and without _trace or prototype keys', () => {
    const query = queryRecord(new URLSearchParams('a=1&b=2&a=3&_trace=1&__proto__=x&constructor=y'))
    expect(query).toEqual({ a: ['1', '3'], b: '2' })
    expect(Object.getPrototypeOf(query)).toBe(Object.prototype)
  })
})

describe('helpers', () => {
  it('recognises loopback addresses only', () => {
    for (const ip of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '127.1.2.3']) expect(isLoopback(ip)).toBe(true)
    for (const ip of ['10.0.0.1', '::ffff:10.0.0.1', 'unknown', '', '127.0.0.1.evil', '1270.0.0.1']) expect(isLoopback(ip)).toBe(false)
  })

  it('escapes every interpolation of the html tag', () => {
    expect(escapeHtml(`<a href="x">'&`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;')
    expect(html`<p>${'<script>'}</p>${[html`<b>${'&'}</b>`]}`.value).toBe('<p>&lt;script&gt;</p><b>&amp;</b>')
  })
})
