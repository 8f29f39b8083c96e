import { describe, expect, it } from 'vitest'
import { maskValue } from '../../src/flow/mask.js'

describe('maskValue', () => {
  const secrets = new Map([
    ['TOKEN', 'super-secret-token'],
    ['SHORT', 'abc'],
  ])

  it('masks secret values deeply, in keys too, and leaves other values alone', () => {
    const value = {
      header: 'Bearer super-secret-token',
      list: ['super-secret-token', 3, null, true],
      nested: { 'super-secret-token': { x: 'abc is short but still masked' } },
    }
    expect(maskValue(value, secrets)).toEqual({
      header: 'Bearer ***',
      list: ['***', 3, null, true],
      nested: { '***': { x: '*** is short but still masked' } },
    })
    expect(value.header).toBe('Bearer super-secret-token')
  })

  it('returns the value itself when there is nothing to mask', () => {
    const value = { a: 'b' }
    expect(maskValue(value, new Map())).toBe(value)
    expect(maskValue(value, new Map([['S', 'ab']]))).toBe(value)
  })
})
