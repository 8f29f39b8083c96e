// canonicalIso answers canonical values without formatting a Date: the quick check must agree
// with `new Date(value).toISOString() === value` for every value, valid or not.
import { describe, expect, it } from 'vitest'
import { canonicalIso, isCanonicalIso } from '../../src/store/ids.js'

const reference = (value: string): boolean => {
  const date = new Date(value)
  return !Number.isNaN(date.getTime()) && date.toISOString() === value
}

describe('canonical ISO times', () => {
  it('agree with Date over every day of 1999–2101 and edge times, and over near misses', () => {
    const values: string[] = []
    for (let ms = Date.UTC(1999, 0, 1); ms < Date.UTC(2101, 0, 1); ms += 86_400_000 + 3_723_017) values.push(new Date(ms).toISOString())
    values.push('0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z', '2024-02-29T12:00:00.000Z', '2000-02-29T00:00:00.000Z')
    const misses = ['2023-02-29T00:00:00.000Z', '1900-02-29T00:00:00.000Z', '2024-04-31T00:00:00.000Z', '2024-13-01T00:00:00.000Z', '2024-00-10T00:00:00.000Z']
    misses.push('2024-01-00T00:00:00.000Z', '2024-01-01T24:00:00.000Z', '2024-01-01T23:60:00.000Z', '2024-01-01T23:59:60.000Z', '2024-01-01T00:00:00Z')
    misses.push(
      '2024-01-01T00:00:00.000+00:00',
      '2024-01-01 00:00:00.000Z',
      '2024-1-01T00:00:00.000Z',
      '+002024-01-01T00:00:00.000Z',
      '2024-01-01T00:00:00.000Z\n',
      '',
    )
    for (const value of [...values, ...misses]) expect(isCanonicalIso(value), value).toBe(reference(value))
    expect(values.length).toBeGreaterThan(30_000)
  })

  it('turns other valid times into the canonical form and refuses the rest', () => {
    expect(canonicalIso('2024-05-01T09:00:00Z', 'at')).toBe('2024-05-01T09:00:00.000Z')
    expect(canonicalIso('2024-05-01T11:00:00.000+02:00', 'at')).toBe('2024-05-01T09:00:00.000Z')
    expect(() => canonicalIso('2024-02-30T00:00:00.000Zx', 'after')).toThrow('after is not a valid ISO time')
  })
})
