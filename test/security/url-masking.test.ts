// SPEC §19: masking covers what the WHATWG URL parser (new URL(), fetch) makes of a secret written
// into a URL as it is: each part of a URL encodes its own characters (a path keeps ' | ^, a query
// encodes ' but keeps { }, user info encodes @ : /), none of which encodeURIComponent or
// URLSearchParams produce.
import { describe, expect, it } from 'vitest'
import { maskSecrets } from '../../src/language/secrets.js'
import { formsOf } from '../../src/language/secret-masking.js'

const SECRET = `k3y "with" <sp>{ecial}|^'\`%x!~é`
const secrets = new Map([['KEY', SECRET]])

describe('masking the WHATWG URL forms of a secret', () => {
  const url = (text: string) => new URL(text).href
  const cases: [string, string][] = [
    ['raw in a path', url(`http://api.test/v1/${SECRET}/items`)],
    ['raw in a query value', url(`http://api.test/v1?key=${SECRET}&b=1`)],
    ['raw in a fragment', url(`http://api.test/v1#${SECRET}`)],
    ['set as pathname', Object.assign(new URL('http://api.test/'), { pathname: `/a/${SECRET}` }).href],
    ['set as search', Object.assign(new URL('http://api.test/'), { search: `?k=${SECRET}` }).href],
    ['set as password', Object.assign(new URL('http://api.test/'), { username: 'u', password: SECRET }).href],
    ['searchParams.set (form encoding)', Object.assign(new URL('http://api.test/'), {}).href + '?' + new URLSearchParams({ k: SECRET })],
  ]
  it.each(cases)('%s', (_, text) => {
    // The form really differs from the literal secret and from encodeURIComponent's (else the case proves nothing).
    expect(text).not.toContain(SECRET)
    expect(text).not.toContain(encodeURIComponent(SECRET))
    const masked = maskSecrets(text, secrets)
    expect(masked).toContain('***')
    // Nothing of the secret's distinctive middle is left.
    expect(masked).not.toMatch(/sp|ecial/)
  })

  it('a path and a query encode differently, and both forms are known', () => {
    const path = new URL(`http://h/${SECRET}`).pathname.slice(1)
    const query = new URL(`http://h/?${SECRET}`).search.slice(1)
    expect(path).not.toBe(query)
    expect(formsOf(SECRET)).toEqual(expect.arrayContaining([path, query]))
  })

  it('a secret with ? and # keeps its later parts in the query and fragment forms', () => {
    const tricky = new Map([['T', 'ab c?d e#f g']])
    const href = new URL('http://h/p/ab c?d e#f g').href
    expect(maskSecrets(href, tricky)).toBe('http://h/p/***')
  })

  it('never masks a shorter text than the secret (the parser drops tabs and trims spaces)', () => {
    for (const form of formsOf('\tzz\n')) expect(form.length).toBeGreaterThanOrEqual(4)
    expect(maskSecrets('zz top', new Map([['S', '\tzz\n']]))).toBe('zz top')
  })
})
