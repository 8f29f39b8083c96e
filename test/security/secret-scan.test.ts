// The scan for secrets in JSON text (`jsonHoldsSecret`) and `maskText` give exactly the answers of
// the plain implementation kept below as the reference: long texts are searched natively, and long
// base64 words are first looked through for the base64 of each form before being decoded.
import { describe, expect, it } from 'vitest'
import { formsOf, jsonHoldsSecret, maskText } from '../../src/language/secret-masking.js'

// --- The reference: the implementation before the native scan and the pre-check. ---

interface ReferenceMasker {
  forms: RegExp
  formList: string[]
  minWord: number
}

function referenceMasker(secrets: Map<string, string>): ReferenceMasker | null {
  const values = [...new Set(secrets.values())].filter((value) => value.length > 0)
  if (values.length === 0) return null
  const forms = new Set<string>()
  for (const value of values) for (const form of formsOf(value)) forms.add(form)
  const sorted = [...forms].sort((a, b) => b.length - a.length)
  const shortest = Math.min(...values.map((v) => Buffer.byteLength(v)))
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  return { forms: new RegExp(sorted.map(escape).join('|'), 'g'), formList: sorted, minWord: Math.max(2, Math.ceil((shortest * 4) / 3)) }
}

function referenceJsonHoldsSecret(json: string, masker: ReferenceMasker | null): boolean {
  if (!masker) return false
  for (const form of masker.formList) if (json.includes(form)) return true
  let start = -1
  for (let i = 0; i <= json.length; i++) {
    const code = i < json.length ? json.charCodeAt(i) : 0
    if (referenceIsBase64Char(code)) {
      if (start < 0) start = i
      continue
    }
    if (start >= 0) {
      let end = i
      while (end < json.length && end - i < 2 && json.charCodeAt(end) === 61) end++
      if (end - start >= masker.minWord && referenceDecodedHoldsSecret(json.slice(start, end), masker)) return true
      start = -1
    }
    if (code === 92) i += json.charCodeAt(i + 1) === 117 ? 5 : 1
  }
  return false
}

function referenceIsBase64Char(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47 || code === 45 || code === 95
}

function referenceMaskText(text: string, masker: ReferenceMasker | null): string {
  if (!masker || text.length === 0) return text
  let masked = text.replace(/[A-Za-z0-9+/_-]+={0,2}/g, (word) => (word.length >= masker.minWord && referenceDecodedHoldsSecret(word, masker) ? '***' : word))
  masked = masked.replace(masker.forms, '***')
  return masked
}

function referenceDecodedHoldsSecret(word: string, masker: ReferenceMasker): boolean {
  const bare = word.replace(/=+$/, '')
  if (bare.length % 4 === 1) return false
  const decoded = Buffer.from(bare, 'base64').toString('utf8')
  // eslint-disable-next-line no-control-regex
  if (decoded.includes('\uFFFD') || /[\u0000-\u0008\u000E-\u001F]/.test(decoded)) return false
  masker.forms.lastIndex = 0
  const found = masker.forms.test(decoded)
  masker.forms.lastIndex = 0
  return found
}

// --- Generated texts. ---

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
  return { next, int, pick }
}

type Random = ReturnType<typeof random>

const SECRETS = [
  'k',
  'k9',
  'k9z',
  'p@s1',
  'é5x!z',
  '€',
  'ab+/c',
  'p@ss w/"q&=+',
  'päss€wörd',
  '日本語のキー',
  '🔑key🔑',
  'sk_live_0123456789abcdefGHIJ',
  'a'.repeat(40),
  'ghp_' + 'Xy9'.repeat(12),
  '>?>?~~>>??', // base64 full of `+` and `/`
  '\uD83D', // lone surrogates: the first also matches the first half of a pair in decoded text
  'key12\uD83D',
  '\uDE00key12',
  'x\uDE00yz12',
]

const BASE64_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const ESCAPES = ['\\n', '\\"', '\\\\', '\\u0001', '\\u00e9', '\\uABCD', '\\t', '\\/', '\\']
const PUNCTUATION = ['"', ':', ',', '{', '}', '[', ']', ' ', '=', '==', '===', '.', '+', '/', '-', '_', '%', 'é', '\u2028']

function toAlphabet(base64: string, alphabet: 'standard' | 'urlSafe' | 'mixed', rng: Random): string {
  if (alphabet === 'standard') return base64
  if (alphabet === 'urlSafe') return base64.replace(/\+/g, '-').replace(/\//g, '_')
  return base64.replace(/[+/]/g, (c) => (rng.int(2) === 0 ? c : c === '+' ? '-' : '_'))
}

function randomBase64(rng: Random, length: number): string {
  let text = ''
  for (let i = 0; i < length; i++) text += rng.int(20) === 0 ? rng.pick(['+', '/', '-', '_']) : rng.pick([...BASE64_CHARS])
  return text
}

function filler(rng: Random, bytes: number): string {
  let text = ''
  while (text.length < bytes) text += rng.pick(['user', ':', ' ', 'token', '=', 'x', '42', 'é', '-', 'Q'])
  return text.slice(0, bytes)
}

/** A base64 word: text holding `inside` (a secret, one of its forms, or a near miss) at a chosen byte alignment. */
function encodedWord(rng: Random, inside: string, long: boolean): string {
  const alignment = rng.int(3)
  const before = filler(rng, long ? 600 + rng.int(600) : rng.int(8))
  const after = filler(rng, long ? 300 + rng.int(600) : rng.int(8))
  const prefix = Buffer.from(before, 'utf8')
  // Pad the prefix to the wanted alignment of `inside`'s first byte.
  const pad = Buffer.from('xx'.slice(0, (alignment - (prefix.length % 3) + 3) % 3))
  let bytes = Buffer.concat([prefix, pad, Buffer.from(inside, 'utf8'), Buffer.from(after, 'utf8')])
  if (rng.int(8) === 0) bytes = Buffer.concat([bytes, Buffer.from([0xff, 0x01])]) // not text
  let base64 = toAlphabet(bytes.toString('base64'), rng.pick(['standard', 'standard', 'urlSafe', 'urlSafe', 'mixed'] as const), rng)
  if (rng.int(3) === 0) base64 = base64.replace(/=+$/, '')
  return base64
}

function nearMiss(rng: Random, secret: string): string {
  const chars = [...secret]
  const i = rng.int(chars.length)
  chars[i] = chars[i] === 'q' ? 'r' : 'q'
  return chars.join('')
}

function piece(rng: Random, secrets: string[], minWord: number, long: boolean): string {
  const secret = rng.pick(secrets)
  switch (rng.int(10)) {
    case 0:
      return rng.pick(ESCAPES)
    case 1:
      return rng.pick(PUNCTUATION)
    case 2: {
      // A word around the shortest length that is decoded, with and without padding.
      const word = randomBase64(rng, Math.max(1, minWord - 3 + rng.int(6)))
      return word + rng.pick(['', '', '=', '==', '==='])
    }
    case 3:
      return encodedWord(rng, rng.pick(formsOf(secret)), long && rng.int(2) === 0)
    case 4:
      return encodedWord(rng, nearMiss(rng, secret), long && rng.int(2) === 0)
    case 5:
      return encodedWord(rng, `user:${secret}`, false)
    case 6:
      // A word split or started by an escape.
      return rng.pick(ESCAPES) + randomBase64(rng, minWord + rng.int(4))
    case 7:
      return JSON.stringify(filler(rng, rng.int(30)) + rng.pick(['\n', '"', '\\', '\u0001', ''])).slice(1, -1)
    case 8:
      return long ? encodedWord(rng, filler(rng, 20), true) : randomBase64(rng, rng.int(12))
    default:
      return randomBase64(rng, rng.int(6))
  }
}

function generatedText(rng: Random, secrets: string[], minWord: number, long: boolean): string {
  const pieces: string[] = ['{"ms":"']
  const target = long ? 4200 + rng.int(6000) : rng.int(300)
  let length = 0
  while (length < target) {
    const next = piece(rng, secrets, minWord, long)
    pieces.push(next)
    length += next.length
  }
  pieces.push(rng.pick(['"}', '', '\\', '\\u00', '=']))
  return pieces.join('')
}

function minWordOf(values: string[]): number {
  return Math.max(2, Math.ceil((Math.min(...values.map((v) => Buffer.byteLength(v))) * 4) / 3))
}

describe('jsonHoldsSecret answers as the plain scan does', () => {
  it.each(SECRETS.map((secret) => [JSON.stringify(secret), secret]))('secret %s, generated texts short and long', (_, secret) => {
    const rng = random(secret.length * 7919 + secret.charCodeAt(0))
    const secretSets = [[secret], [secret, 'sk_live_0123456789abcdefGHIJ'], [secret, rng.pick(SECRETS)]]
    let holding = 0
    let holdingOnlyDecoded = 0
    for (const values of secretSets) {
      const secrets = new Map(values.map((value, i) => [`S${i}`, value]))
      const reference = referenceMasker(secrets)
      const minWord = minWordOf(values)
      for (let n = 0; n < 60; n++) {
        const text = generatedText(rng, values, minWord, n % 2 === 0)
        const expected = referenceJsonHoldsSecret(text, reference)
        expect(jsonHoldsSecret(text, secrets), text.slice(0, 200)).toBe(expected)
        if (expected) holding++
        if (expected && !reference!.formList.some((form) => text.includes(form))) holdingOnlyDecoded++
      }
    }
    // The texts hold secrets, some of them only in decoded words.
    expect(holding).toBeGreaterThan(0)
    expect(holdingOnlyDecoded).toBeGreaterThan(0)
  })

  it('long single words hold a form at each byte alignment, in each alphabet', () => {
    const rng = random(42)
    for (const secret of SECRETS) {
      const secrets = new Map([['S', secret]])
      const reference = referenceMasker(secrets)
      for (const form of formsOf(secret)) {
        for (const inside of [form, nearMiss(rng, form)]) {
          for (let n = 0; n < 6; n++) {
            const word = encodedWord(rng, inside, true)
            for (const text of [`{"ms":"${word}"}`, `{"ms":"${word}"}`.repeat(3), word]) {
              expect(jsonHoldsSecret(text, secrets), `${secret} ${inside}`).toBe(referenceJsonHoldsSecret(text, reference))
              expect(maskText(text, secrets)).toBe(referenceMaskText(text, reference))
            }
          }
        }
      }
    }
  })

  it('words mixing both alphabets, and pairs holding a secret ending or starting with a lone surrogate', () => {
    const rng = random(5)
    const cases: [string, string][] = [
      ['>?>?~~>>??', '>?>?~~>>??'],
      ['key12\uD83D', 'key12😀'],
      ['\uDE00key12', '😀key12'],
    ]
    for (const [secret, inside] of cases) {
      const secrets = new Map([['S', secret]])
      const reference = referenceMasker(secrets)
      let holding = 0
      for (let n = 0; n < 30; n++) {
        const word = encodedWord(rng, `user:${inside}:${'>?~'.repeat(300)}`, true)
        // Both alphabets in one word: every other `+` and `/` written as `-` and `_`.
        let flip = false
        const mixed = word.replace(/[+/]/g, (c) => {
          flip = !flip
          return flip ? c : c === '+' ? '-' : '_'
        })
        for (const text of [`{"ms":"${word}"}`, `{"ms":"${mixed}"}`, `{"a":"${'x'.repeat(5000)}","ms":"${mixed}"}`]) {
          const expected = referenceJsonHoldsSecret(text, reference)
          if (expected) holding++
          expect(jsonHoldsSecret(text, secrets)).toBe(expected)
          expect(maskText(text, secrets)).toBe(referenceMaskText(text, reference))
        }
      }
      expect(holding).toBeGreaterThan(30)
    }
  })

  it('texts dense with escapes or short words, past the native scan', () => {
    const rng = random(7)
    for (const secret of ['k', 'k9z', 'p@ss w/"q&=+']) {
      const secrets = new Map([['S', secret]])
      const reference = referenceMasker(secrets)
      const word = encodedWord(rng, `user:${secret}`, false)
      const texts = [
        '\\n'.repeat(5000) + word,
        'ab '.repeat(3000) + word,
        'ab '.repeat(3000) + '\\u' + word,
        'z'.repeat(6000) + '\\n'.repeat(4000) + word + '\\',
        '\\\\'.repeat(3000) + 'n' + word,
        '\\u\\\\\\'.repeat(1500) + word,
        'x'.repeat(5000) + '\\u00' + word,
        'x'.repeat(5000) + '\\' + word,
      ]
      for (const text of texts) {
        expect(jsonHoldsSecret(text, secrets), text.slice(-60)).toBe(referenceJsonHoldsSecret(text, reference))
        expect(jsonHoldsSecret(`${text}\\`, secrets)).toBe(referenceJsonHoldsSecret(`${text}\\`, reference))
      }
    }
  })

  it('maskText masks the same words as before in generated texts', () => {
    const rng = random(99)
    for (const secret of SECRETS) {
      const secrets = new Map([['S', secret]])
      const reference = referenceMasker(secrets)
      const minWord = minWordOf([secret])
      for (let n = 0; n < 10; n++) {
        const text = generatedText(rng, [secret], minWord, n % 2 === 0)
        expect(maskText(text, secrets)).toBe(referenceMaskText(text, reference))
      }
    }
  })

  it('a 1 MB word of one letter holds no secret', () => {
    const secrets = new Map([['S', 'sk_live_0123456789abcdefGHIJ']])
    const text = `{"ms":"${'z'.repeat(1_000_000)}"}`
    expect(jsonHoldsSecret(text, secrets)).toBe(false)
    expect(referenceJsonHoldsSecret(text, referenceMasker(secrets))).toBe(false)
  })
})
