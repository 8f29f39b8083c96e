// Issue 20: `validate` reports what would go wrong with secrets at run time — a short secret (it is
// still masked), and `database: "${secrets.DATABASE_URL}"` that is missing or not a database URL —
// without printing the value.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readProject } from '../../src/project/load.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { makeTempDir } from '../helpers.js'

async function project(settings: string, dotenv: string, flow?: string): Promise<string> {
  const dir = await makeTempDir('flowctl-secrets-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), `projectId: sec\nname: Sec\n${settings}`)
  await writeFile(join(dir, '.env'), dotenv)
  if (flow) await writeFile(join(dir, 'flows', 'f.yaml'), flow)
  return dir
}

const FLOW = `name: F
nodes:
  - { id: start, type: start, name: Start, auth: { type: bearer, token: "\${secrets.TOKEN}" }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`

describe('validate and secrets', () => {
  it('warns about a secret shorter than 8 characters, without its value', async () => {
    const { project: p } = await readProject(await project('', 'TOKEN=abc123\n', FLOW), { env: {} })
    const warning = p.problems.find((problem) => problem.message.includes('shorter than 8'))
    expect(warning?.severity).toBe('warning')
    expect(warning?.message).toContain('"TOKEN"')
    expect(JSON.stringify(p.problems)).not.toContain('abc123')
  })

  it('does not warn about a long secret', async () => {
    const { project: p } = await readProject(await project('', 'TOKEN=a-long-enough-token\n', FLOW), { env: {} })
    expect(p.problems.filter((problem) => problem.message.includes('shorter than'))).toEqual([])
  })

  it('reports a database secret that is missing', async () => {
    const { project: p } = await readProject(await project('database: "${secrets.DATABASE_URL}"\n', ''), { env: {} })
    const problem = p.problems.find((item) => item.message.includes('DATABASE_URL'))
    expect(problem?.file).toBe('flowctl.yaml')
    expect(problem?.message).toContain('not set')
  })

  it('reports a database secret that is not a database URL, without its value', async () => {
    const { project: p, settingsInvalid } = await readProject(
      await project('database: "${secrets.DATABASE_URL}"\n', 'DATABASE_URL=mysql://root:hunter2-pass@db/x\n'),
      { env: {} },
    )
    const problem = p.problems.find((item) => item.message.includes('DATABASE_URL'))
    expect(problem?.severity).toBe('error')
    expect(settingsInvalid).toBe(true)
    expect(JSON.stringify(p.problems)).not.toContain('hunter2')
  })

  it('opens the store named by a database secret', async () => {
    const { project: p } = await readProject(await project('database: "${secrets.DATABASE_URL}"\n', 'DATABASE_URL=embedded\n'), { env: {} })
    expect(p.problems.filter((item) => item.severity === 'error')).toEqual([])
    const store = await openProjectStore(p, { env: {} })
    await store.close()
  })
})
