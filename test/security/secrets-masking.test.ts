// Issue 20: masking follows the forms a secret takes on its way out (JSON-escaped, percent- and
// form-encoded, base64, Basic `user:pass`), short secrets included, in trace answers and stored runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maskValue } from '../../src/flow/mask.js'
import { maskSecrets } from '../../src/language/secrets.js'
import { startLocalServer, type LocalServer } from '../nodes/local-server.js'
import { jsonPost, startTestServer, type TestServer } from '../http/setup.js'

const SECRET = 'p@ss w/"q&=+'
const secrets = new Map([['API', SECRET]])
const b64 = (text: string) => Buffer.from(text).toString('base64')

describe('maskSecrets: each encoding of a secret is masked', () => {
  const cases: [string, string][] = [
    ['literal', `x ${SECRET} y`],
    ['JSON-escaped', JSON.stringify({ key: SECRET })],
    ['encodeURIComponent', `https://api.example/?k=${encodeURIComponent(SECRET)}`],
    ['lower-case percent-encoding', `k=${encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())}`],
    ['form encoding', new URLSearchParams({ k: SECRET }).toString()],
    ['plain base64', `token ${b64(SECRET)}`],
    ['base64 without padding', `token ${b64(SECRET).replace(/=+$/, '')}`],
    ['base64url', `token ${Buffer.from(SECRET).toString('base64url')}`],
    ['Basic user:pass', `Basic ${b64(`someone:${SECRET}`)}`],
    ['Basic with the secret as user', `Basic ${b64(`${SECRET}:x`)}`],
  ]
  it.each(cases)('%s', (_, text) => {
    const masked = maskSecrets(text, secrets)
    expect(masked).toContain('***')
    expect(masked).not.toContain(SECRET)
    // No form of the secret is left to decode.
    expect(masked).not.toContain(encodeURIComponent(SECRET))
    expect(masked).not.toContain(b64(SECRET).slice(0, 12))
  })

  it('masks short secrets too (validate warns about them)', () => {
    const short = new Map([['PIN', 'k9z']])
    expect(maskSecrets('pin=k9z', short)).toBe('pin=***')
    expect(maskSecrets(`Basic ${b64('u:k9z')}`, short)).toBe('Basic ***')
  })

  it.each([
    ['after a newline', (word: string) => `line one\n${word}`],
    ['after a quote', (word: string) => `say "${word}"`],
    ['after a backslash', (word: string) => `C:\\${word}`],
    ['after a NUL', (word: string) => `a\u0000${word}`],
  ])('masks a base64 word %s inside a value (the JSON fast path sees it too)', (_, place) => {
    const word = b64(`someone:${SECRET}`)
    const value = { header: place(word), list: [place(word)] }
    const masked = JSON.stringify(maskValue(value, secrets))
    expect(masked).not.toContain(word)
    expect(masked).toContain('***')
  })

  it('leaves ordinary text alone', () => {
    expect(maskSecrets('Basic dXNlcjpvdGhlcg== and some plain words', secrets)).toBe('Basic dXNlcjpvdGhlcg== and some plain words')
    const value = { a: ['b', { c: 'd' }] }
    expect(maskValue(value, secrets)).toBe(value)
  })
})

describe('trace answers and stored runs mask derived forms', () => {
  let upstream: LocalServer
  let s: TestServer
  beforeAll(async () => {
    upstream = await startLocalServer()
    const flow = `name: Leak Forms
nodes:
  - { id: start, type: start, name: Start, method: post, next: call }
  - id: call
    type: http
    name: Call
    method: post
    url: "${upstream.url}/echo"
    query: { key: "\${secrets.API}" }
    headers: { Authorization: "Basic {{ start.basic }}", X-Short: "\${secrets.PIN}" }
    form: { secret: "\${secrets.API}" }
    next: done
  - { id: done, type: end, name: Done, body: { echoed: "{{call.body}}" } }
`
    s = await startTestServer({ flows: { 'leak-forms.yaml': flow }, env: `API=${JSON.stringify(SECRET)}\nPIN=k9z\n` })
  })
  afterAll(async () => {
    await s?.close()
    await upstream?.close()
  })

  it('in the _trace answer (steps and response.body) and the stored trace and input', async () => {
    const basic = b64(`someone:${SECRET}`)
    const response = await s.request('/api/run/shop/leak-forms?_trace=1', jsonPost({ basic }))
    const text = await response.text()
    expect(response.status, text).toBe(200)
    const forms = [
      SECRET,
      encodeURIComponent(SECRET),
      new URLSearchParams({ k: SECRET }).toString().slice(2),
      basic,
      JSON.stringify(SECRET).slice(1, -1),
      'k9z',
    ]
    for (const form of forms) expect(text).not.toContain(form)
    const answer = JSON.parse(text)
    expect(JSON.stringify(answer.response.body)).toContain('***')
    const runId = response.headers.get('x-run-id')!
    const stored = await s.workspace.get('shop')!.store!.history.getRun('shop', runId)
    const storedText = JSON.stringify(stored)
    expect(storedText).toContain('***')
    for (const form of forms) expect(storedText).not.toContain(form)
  })
})
