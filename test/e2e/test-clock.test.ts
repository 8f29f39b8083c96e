// SPEC §20 "Test clock": in a flow test case with `now:`, `$now()` and `$millis()` return that time
// (they read the run's start, which `now:` sets), so date expressions do not depend on the clock.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl } from '../helpers.js'

afterAll(cleanupTempDirs)

const FLOW = `name: Stamp
nodes:
  - id: start
    type: start
    name: Start
    method: post
    next: stamp
  - id: stamp
    type: set
    name: Stamp
    values:
      now: "{{= $now() }}"
      millis: "{{= $millis() }}"
      day: "{{= $now('[Y0001]-[M01]-[D01] [H01]:[m01]', '+0100') }}"
      startedAt: "{{ run.startedAt }}"
    next: done
  - id: done
    type: end
    name: Done
    body: "{{stamp}}"
`

const TESTS = `flow: stamp
cases:
  - name: the clock is the case's now
    now: 2026-01-01T09:00:00Z
    expect:
      body:
        now: "2026-01-01T09:00:00.000Z"
        millis: 1767258000000
        day: "2026-01-01 10:00"
        startedAt: "2026-01-01T09:00:00.000Z"
`

describe('flowctl test with now:', () => {
  it('$now() and $millis() return the case time', async () => {
    const dir = await copyFixture('testing')
    await writeFile(join(dir, 'flows', 'stamp.yaml'), FLOW)
    await writeFile(join(dir, 'tests', 'stamp.test.yaml'), TESTS)
    const result = await flowctl(['test', '--project', dir, '--flow', 'stamp', '--json'])
    const report = JSON.parse(result.stdout) as { ok: boolean; cases: { name: string; ok: boolean; failures: unknown[]; notes: string[] }[] }
    expect(report.cases, result.stdout).toHaveLength(1)
    expect(report.cases[0]!.failures).toEqual([])
    expect(report.cases[0]!.notes).toEqual([])
    expect(result.exitCode).toBe(0)
  })

  it('outside tests, one run sees one time: $now() is the run start', async () => {
    const dir = await copyFixture('testing')
    await writeFile(join(dir, 'flows', 'stamp.yaml'), FLOW)
    const result = await flowctl(['run', 'stamp', '--project', dir, '--json'])
    expect(result.exitCode, result.stderr).toBe(0)
    const { body } = JSON.parse(result.stdout) as { body: { now: string; millis: number; startedAt: string } }
    expect(body.now).toBe(body.startedAt)
    expect(body.millis).toBe(Date.parse(body.startedAt))
  })
})
