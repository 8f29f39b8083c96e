// The settings of async runs (SPEC §12): `respond` on a Start and `limits.asyncConcurrency`.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadProject } from '../../src/project/load.js'

const temps: string[] = []
afterAll(() => Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true }))))

async function load(limits: string, respond: string) {
  const dir = await mkdtemp(join(tmpdir(), 'flowctl-async-settings-'))
  temps.push(dir)
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), `projectId: p\nname: P\n${limits}`)
  await writeFile(
    join(dir, 'flows', 'job.yaml'),
    `name: Job\nnodes:\n  - { id: start, type: start, name: Start${respond}, next: done }\n  - { id: done, type: end, name: Done }\n`,
  )
  try {
    const project = await loadProject(dir, { env: {} })
    const flow = project.flows.get('job')
    // A flow file with errors is left out of the project, its problems listed.
    const problems = project.problems.filter((p) => p.severity === 'error').map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`)
    return { concurrency: project.settings.limits.asyncConcurrency, respond: flow ? (flow.start?.respond ?? 'sync') : null, problems }
  } catch (error) {
    const problems = ((error as { problems?: { file: string; line: number; column: number; message: string }[] }).problems ?? []).map(
      (p) => `${p.file}:${p.line}:${p.column}: ${p.message}`,
    )
    return { concurrency: null, respond: null, problems }
  }
}

describe('async run settings', () => {
  it.each([
    ['', '', { concurrency: 4, respond: 'sync', problems: [] }],
    ['limits: { asyncConcurrency: 0 }\n', ', respond: async', { concurrency: 0, respond: 'async', problems: [] }],
    ['', ', respond: sync', { concurrency: 4, respond: 'sync', problems: [] }],
    ['limits: { asyncConcurrency: -1 }\n', '', { concurrency: null, respond: null, problems: ['flowctl.yaml:3:29: limits.asyncConcurrency must be >= 0'] }],
    [
      '',
      ', respond: later',
      { concurrency: 4, respond: null, problems: ['flows/job.yaml:3:53: node "start": respond must be one of: sync, async (not "later")'] },
    ],
  ])('limits %j and Start%s', async (limits, respond, expected) => {
    expect(await load(limits, respond)).toEqual(expected)
  })
})
