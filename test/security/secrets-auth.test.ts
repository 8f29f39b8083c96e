// Issue 20 / SPEC §17: an expected credential that holds any empty or unresolved secret rejects every
// request, whatever text surrounds the secret; Basic never accepts blank credentials.
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonPost, startTestServer, type TestServer } from '../http/setup.js'

const flow = (slug: string, auth: string) => `name: ${slug}
nodes:
  - { id: start, type: start, name: Start, method: post, auth: ${auth}, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`

let s: TestServer
beforeAll(async () => {
  s = await startTestServer({
    flows: {
      'empty-in-token.yaml': flow('Empty In Token', '{ type: bearer, token: "tok-${secrets.EMPTY}" }'),
      'blank-in-token.yaml': flow('Blank In Token', '{ type: bearer, token: "tok-${secrets.BLANK}-x" }'),
      'missing-in-key.yaml': flow('Missing In Key', '{ type: apiKey, key: "k-${secrets.NOPE}" }'),
      'empty-in-password.yaml': flow('Empty In Password', '{ type: basic, username: admin, password: "pw${secrets.EMPTY}" }'),
      'blank-basic.yaml': flow('Blank Basic', '{ type: basic, username: "${secrets.BLANK}", password: "${secrets.BLANK}" }'),
      'empty-hmac.yaml': flow('Empty Hmac', '{ type: hmac, header: x-sig, secret: "s-${secrets.EMPTY}" }'),
      'good-basic.yaml': flow('Good Basic', '{ type: basic, username: admin, password: "${secrets.PASS}" }'),
    },
    env: 'EMPTY=\nBLANK="   "\nPASS=correct-horse-battery\n',
  })
})
afterAll(async () => {
  await s?.close()
})

describe('fail-closed credentials', () => {
  it.each([
    ['empty-in-token', { authorization: 'Bearer tok-' }],
    ['blank-in-token', { authorization: 'Bearer tok-   -x' }],
    ['missing-in-key', { 'x-api-key': 'k-' }],
    ['empty-in-password', { authorization: basic('admin', 'pw') }],
    ['blank-basic', { authorization: basic('   ', '   ') }],
    ['empty-hmac', { 'x-sig': createHmac('sha256', 's-').update('{}').digest('hex') }],
  ])('%s rejects the credential that the surrounding text alone would make', async (slug, headers) => {
    const response = await s.request(`/api/run/shop/${slug}`, jsonPost('{}', headers))
    expect(response.status).toBe(401)
  })

  it('Basic rejects whitespace-only credentials and still accepts the right ones', async () => {
    expect((await s.request('/api/run/shop/good-basic', jsonPost('{}', { authorization: basic(' ', ' ') }))).status).toBe(401)
    expect((await s.request('/api/run/shop/good-basic', jsonPost('{}', { authorization: basic('admin', 'correct-horse-battery') }))).status).toBe(200)
  })
})
