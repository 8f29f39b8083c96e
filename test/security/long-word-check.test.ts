// jsonHoldsSecret decodes base64 words only when a regular expression finds a run of base64
// characters long enough to be one; the answer must be the character loop's for every text.
import { describe, expect, it } from 'vitest'
import { jsonHoldsSecret, longWordHoldsSecret, maskerOf } from '../../src/language/secret-masking.js'

function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SECRET = 'bench-token-0123456789abcdef'
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-'

describe('the long-word check before decoding base64 words', () => {
  it('answers as the character loop does, over 20,000 generated texts', () => {
    const secrets = new Map([['TOKEN', SECRET]])
    const masker = maskerOf(secrets)!
    const wrapped = [Buffer.from(`user:${SECRET}`).toString('base64'), Buffer.from(`${SECRET}!`).toString('base64url'), Buffer.from(`x${SECRET}`).toString('base64')]
    const pieces = ['"', ':', ',', '{', '}', '[', ']', ' ', '\\n', '\\"', '\\u00e9', '\\u0041', '=', '==', '.', '%2F']
    let found = 0
    for (let seed = 1; seed <= 20_000; seed++) {
      const next = random(seed)
      let text = ''
      for (let i = Math.floor(next() * 12); i >= 0; i--) {
        const roll = next()
        if (roll < 0.4) text += pieces[Math.floor(next() * pieces.length)]
        else if (roll < 0.5) {
          // A word that decodes to the secret, sometimes cut short or run into its neighbours.
          const word = wrapped[Math.floor(next() * wrapped.length)]!
          text += next() < 0.3 ? word.slice(0, Math.floor(next() * word.length)) : word
        } else {
          // Random base64 runs around the length that matters (the shortest word is 38 characters).
          const length = Math.floor(next() * 44)
          for (let j = 0; j < length; j++) text += ALPHABET[Math.floor(next() * ALPHABET.length)]
        }
      }
      const reference = masker.formList.some((form) => text.includes(form)) || longWordHoldsSecret(text, masker)
      expect(jsonHoldsSecret(text, secrets), JSON.stringify(text)).toBe(reference)
      if (reference) found++
    }
    // Both answers occur often enough to mean something.
    expect(found).toBeGreaterThan(500)
    expect(found).toBeLessThan(19_500)
  })
})
