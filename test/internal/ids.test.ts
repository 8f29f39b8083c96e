import { describe, expect, it } from 'vitest'
import { newDocumentId } from '../../src/internal/ids.js'

describe('document ids', () => {
  it('are 24 hex characters, unique, and sort by creation time (seconds first, like an ObjectId)', () => {
    const t = Date.UTC(2026, 10, 21, 12, 0, 0)
    const ids = [t, t + 1500, t + 1_000_000, t + 86_400_000].map((now) => newDocumentId(now))
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{24}$/)
    expect([...ids].sort()).toEqual(ids)
    expect(ids[0].slice(0, 8)).toBe((t / 1000).toString(16))
    const many = new Set(Array.from({ length: 10_000 }, () => newDocumentId(t)))
    expect(many.size).toBe(10_000)
  })
})
