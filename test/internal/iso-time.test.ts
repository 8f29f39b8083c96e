// isoTime against Date.prototype.toISOString, and canonicalIso's shortcut against parsing.
import { describe, expect, it } from 'vitest'
import { isCanonicalOfThisMinute, isoTime } from '../../src/internal/iso-time.js'
import { canonicalIso } from '../../src/store/ids.js'

function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

describe('isoTime', () => {
  it('writes what toISOString writes, for times in the same minute, across minutes and at the edges', () => {
    const next = random(7)
    const times: number[] = []
    for (let i = 0; i < 2000; i++) {
      const base = Math.floor(next() * 4_102_444_800_000) // 1970..2100
      times.push(base)
      for (let j = 0; j < 5; j++) times.push(base + Math.floor(next() * 120_000) - 60_000)
    }
    const edges = [0, 1, 59_999, 60_000, 86_399_999, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2024, 2, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999)]
    const outside = [-1, -86_400_001, 253_402_300_800_000, 8.64e15, 1.5, 1_700_000_000_000.75, -0]
    for (const ms of [...times, ...edges, ...outside]) expect(isoTime(ms)).toBe(new Date(ms).toISOString())
  })

  it('throws as toISOString does for a time that is not one', () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError)
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError)
  })
})

describe('canonicalIso', () => {
  it('gives back a time of this minute unparsed only where parsing would give the same text', () => {
    const now = Date.now()
    const prefix = isoTime(now).slice(0, 17)
    expect(isCanonicalOfThisMinute(isoTime(now))).toBe(true)
    const tails = ['00.000Z', '59.999Z', '60.000Z', '5a.000Z', '07.25Z', '07.2500', '07.250z', '07,250Z', '07.250+', ' 7.250Z', '99.000Z']
    for (const tail of tails) {
      const text = prefix + tail
      if (isCanonicalOfThisMinute(text)) expect(new Date(text).toISOString()).toBe(text)
      let parsed: string | Error
      try {
        parsed = canonicalIso(text, 'at')
      } catch (error) {
        parsed = error as Error
      }
      const date = new Date(text)
      if (Number.isNaN(date.getTime())) expect(parsed).toBeInstanceOf(Error)
      else expect(parsed).toBe(date.toISOString())
    }
  })

  it('still parses other forms and other minutes', () => {
    isoTime(Date.now())
    expect(canonicalIso('2024-05-01T09:00:00Z', 'at')).toBe('2024-05-01T09:00:00.000Z')
    expect(canonicalIso('2024-05-01T11:00:00.000+02:00', 'at')).toBe('2024-05-01T09:00:00.000Z')
    expect(() => canonicalIso('yesterday', 'after')).toThrow(/after is not a valid ISO time/)
  })
})
