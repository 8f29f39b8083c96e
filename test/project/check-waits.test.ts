// Where a callback wait may be (SPEC §22), as `flowctl validate --json` reports it: only in flows that
// answer before they wait (respond: async, a schedule, or http: false flows called only from those);
// in a synchronous HTTP flow it is a load error at the wait's `until`, with file, line and column.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, flowctl, makeTempDir } from '../helpers.js'

afterAll(cleanupTempDirs)

const flow = (name: string, start: string, rest: string) => `name: ${name}
nodes:
  - id: start
    type: start
    name: Start
${start}    next: ${rest.includes('id: call') ? 'call' : 'wait'}
${rest}`

const WAIT = `  - id: wait
    type: wait
    name: Decision
    until: callback
`
const CALL = (slug: string) => `  - { id: call, type: call, name: Call, flow: ${slug} }
`

async function validate(files: Record<string, string>): Promise<{ file: string; line: number; column: number; message: string }[]> {
  const dir = await makeTempDir('flowctl-check-waits-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: w\nname: W\n')
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, 'flows', name), text)
  const result = await flowctl(['validate', '--json', '--project', dir])
  const problems = (JSON.parse(result.stdout) as { problems: { file: string; line: number; column: number; message: string; severity?: string }[] }).problems
  return problems.filter((problem) => !problem.message.startsWith('warning: '))
}

describe('callback waits at load', () => {
  it("are a load error in a synchronous HTTP flow, at the wait's until", async () => {
    const problems = await validate({ 'sync.yaml': flow('Sync', '    method: post\n', WAIT) })
    expect(problems).toEqual([
      expect.objectContaining({
        file: 'flows/sync.yaml',
        line: 11,
        column: 12,
        message: expect.stringContaining('node "wait": a callback wait parks the run, so its flow must answer its caller first'),
      }),
    ])
  })

  it('are allowed with respond: async, on a schedule, and in http: false flows called only from those', async () => {
    const problems = await validate({
      'async.yaml': flow('Async', '    method: post\n    respond: async\n', WAIT),
      'nightly.yaml': flow('Nightly', '    method: post\n', WAIT).replace('nodes:', 'schedule: { cron: "0 3 * * *" }\nnodes:'),
      'caller.yaml': flow('Caller', '    method: post\n    respond: async\n', CALL('helper')),
      'helper.yaml': flow('Helper', '    http: false\n', WAIT),
    })
    expect(problems).toEqual([])
  })

  it('are refused in a called flow that a synchronous flow calls, or that has a route of its own', async () => {
    const problems = await validate({
      'caller.yaml': flow('Caller', '    method: post\n', CALL('helper')),
      'helper.yaml': flow('Helper', '    http: false\n', WAIT),
      'routed.yaml': flow('Routed', '    method: post\n', WAIT),
      'async.yaml': flow('Async', '    method: post\n    respond: async\n', CALL('routed')),
    })
    expect(problems.map((problem) => problem.file).sort()).toEqual(['flows/helper.yaml', 'flows/routed.yaml'])
  })

  it('take no ms, and a timeout of at most 30 days', async () => {
    const problems = await validate({
      'async.yaml': flow('Async', '    method: post\n    respond: async\n', `${WAIT}    ms: 10\n`),
      'long.yaml': flow('Long', '    method: post\n    respond: async\n', `${WAIT}    timeoutSeconds: 2592001\n`),
    })
    expect(problems.map((problem) => problem.message).join('\n')).toMatch(/remove ms/)
    expect(problems.map((problem) => problem.message).join('\n')).toMatch(/2592000/)
  })
})
