// Text no store can keep (NUL, lone surrogates) is found in parsed JSON bodies, and a body whose JSON
// text cannot hold any is not walked again (SPEC §18: rejecting a large body stays cheap).
import { describe, expect, it } from 'vitest'
import { parseJsonText } from '../../src/http/body.js'
import { unstorableTextErrors } from '../../src/flow/unstorable-text.js'

const parsed = (text: string): unknown => {
  const result = parseJsonText(text)
  if (!result.ok) throw new Error(result.error)
  return result.body
}

describe('unstorable text in JSON bodies', () => {
  const cases: [string, string, string[]][] = [
    ['plain text', '{"name":"Ada","tags":["a","b"]}', []],
    ['a NUL escape', '{"name":"a\\u0000b"}', ['body/name: contains a NUL character (\\u0000), which cannot be stored']],
    ['a lone surrogate escape, upper case', '{"name":"x\\uD800"}', ['body/name: contains a lone UTF-16 surrogate (not valid Unicode), which cannot be stored']],
    ['a NUL in a key', '{"ok":1,"x\\u0000":1}', ['body/x\\u0000: name contains a NUL character (\\u0000), which cannot be stored']],
    ['an escaped pair is storable', '{"e":"\\ud83d\\ude00"}', []],
    ['a raw emoji is storable', '{"e":"😀"}', []],
    ['an escaped backslash before u0000 is plain text', '{"s":"\\\\u0000"}', []],
  ]
  for (const [name, text, errors] of cases) {
    it(name, () => {
      expect(unstorableTextErrors('body', parsed(text))).toEqual(errors)
    })
  }

  it('a body whose text holds no escape is not walked: the same object with a NUL put in afterwards passes', () => {
    // Proves the shortcut is taken (a walk would find the NUL); only values JSON.parse made from
    // that text are ever marked, and nothing changes them before the check.
    const body = parsed('{"name":"Ada"}') as Record<string, string>
    body.name = 'a\u0000b'
    expect(unstorableTextErrors('body', body)).toEqual([])
    expect(unstorableTextErrors('body', { name: 'a\u0000b' })).toHaveLength(1)
  })
})
