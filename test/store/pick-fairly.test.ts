// pickFairly (src/model/async-runs.ts): which queued runs a claim takes, round-robin across flows,
// oldest first within a flow (SPEC §18). The stores' contract suite checks the same through claims.
import { describe, expect, it } from 'vitest'
import { pickFairly, type AsyncCandidate } from '../../src/model/async-runs.js'

/** `a3` is flow a's run received at second 3. */
const run = (name: string): AsyncCandidate => ({ id: name, flow: name[0]!, receivedAt: `2024-05-01T09:00:${name.slice(1).padStart(2, '0')}.000Z` })
const runs = (names: string) => names.split(' ').map(run)

describe('pickFairly', () => {
  const cases: { name: string; candidates: string; busy?: Record<string, number>; limit: number; picked: string[] }[] = [
    { name: 'one flow: oldest first', candidates: 'a3 a1 a2', limit: 2, picked: ['a1', 'a2'] },
    {
      name: "a backlog's first run, then the other flows' first runs, before its second",
      candidates: 'a1 a2 a3 a4 b9 c7',
      limit: 4,
      picked: ['a1', 'c7', 'b9', 'a2'],
    },
    { name: 'within a turn, the oldest run first', candidates: 'b5 a6 c4', limit: 2, picked: ['c4', 'b5'] },
    { name: 'a flow with runs under way waits its turn', candidates: 'a1 a2 b9', busy: { a: 2 }, limit: 1, picked: ['b9'] },
    { name: 'busy counts add to the turn', candidates: 'a1 a2 b8 b9', busy: { a: 1 }, limit: 3, picked: ['b8', 'a1', 'b9'] },
    { name: 'nothing to pick', candidates: '', limit: 4, picked: [] },
    { name: 'a limit of 0 picks nothing', candidates: 'a1', limit: 0, picked: [] },
  ]
  for (const { name, candidates, busy = {}, limit, picked } of cases) {
    it(name, () => {
      expect(pickFairly(candidates ? runs(candidates) : [], new Map(Object.entries(busy)), limit)).toEqual(picked)
    })
  }

  it('breaks a tie of receivedAt by id, so every store picks the same', () => {
    const at = '2024-05-01T09:00:00.000Z'
    const tied = [
      { id: 'z', flow: 'a', receivedAt: at },
      { id: 'y', flow: 'a', receivedAt: at },
    ]
    expect(pickFairly(tied, new Map(), 1)).toEqual(['y'])
  })
})
