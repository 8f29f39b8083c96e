// The watcher's messages: one line per save, saying added, reloaded or removed; hidden files ignored.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { watchProjects, type ProjectWatchers } from '../../src/serve/reload.js'
import { Workspace } from '../../src/serve/workspace.js'
import { loadProject } from '../../src/project/load.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { cleanupTempDirs, copyFixture, eventually } from '../helpers.js'

const greet = (message: string) =>
  [
    'name: Greet',
    'nodes:',
    // Its own operationId: the example's order-status is another `start_get` (a validate warning).
    '  - { id: start, type: start, name: Start, method: get, operationId: greet, next: done }',
    `  - { id: done, type: end, name: Done, body: { message: "${message}" } }`,
    '',
  ].join('\n')

let dir: string
let workspace: Workspace
let watchers: ProjectWatchers
const logs: string[] = []
let reloads = 0

beforeAll(async () => {
  dir = await copyFixture('example')
  workspace = new Workspace((project) => openProjectStore(project, { env: {} }))
  await workspace.add(await loadProject(dir, { env: {} }))
  watchers = await watchProjects(workspace, { log: (line) => logs.push(line), onReload: () => reloads++ })
})

afterAll(async () => {
  await watchers.close()
  await workspace.close()
  await cleanupTempDirs()
})

/** Waits until the watcher is quiet (no reload for 400 ms) and returns the lines logged meanwhile. */
async function settle(): Promise<string[]> {
  let seen = -1
  await eventually(
    async () => {
      if (seen === reloads) return true
      seen = reloads
      return false
    },
    5_000,
    400,
  )
  return logs.splice(0)
}

describe('reload messages', () => {
  it('says added, reloaded and removed, once per save', async () => {
    const file = join(dir, 'flows', 'greet.yaml')
    await writeFile(file, greet('one'))
    expect(await settle()).toEqual(['reloaded shop (flows/greet.yaml): flow greet added'])
    await writeFile(file, greet('two'))
    expect(await settle()).toEqual(['reloaded shop (flows/greet.yaml): flow greet changed'])
    await rm(file)
    expect(await settle()).toEqual(['reloaded shop (flows/greet.yaml): flow greet removed'])
    expect(workspace.get('shop')!.project.flows.has('greet')).toBe(false)
  })

  it('ignores hidden files in flows/ (editor copies, macOS ._ files)', async () => {
    await writeFile(join(dir, 'flows', '.greet-copy.yaml'), greet('hidden'))
    await writeFile(join(dir, 'flows', '._greet.yaml'), '\u0000\u0005binary')
    expect(await settle()).toEqual([])
    const project = workspace.get('shop')!.project
    expect(project.flows.has('greet')).toBe(false)
    expect(project.problems.filter((p) => p.file.includes('greet'))).toEqual([])
    // A fresh load ignores them too.
    const loaded = await loadProject(dir, { env: {} })
    expect([...loaded.flows.values()].map((flow) => flow.file).filter((file) => file.includes('greet'))).toEqual([])
    expect(loaded.problems).toEqual([])
  })

  it('watches folders, not each flow file: fewer watch handles than flow files', () => {
    const flows = workspace.get('shop')!.project.flows.size
    const watches = process.getActiveResourcesInfo().filter((kind) => kind === 'FSEventWrap').length
    expect(flows).toBeGreaterThanOrEqual(12)
    expect(watches).toBeGreaterThan(0)
    expect(watches).toBeLessThanOrEqual(6)
  })

  it('follows safe writes (a temporary file renamed over the flow) and quick successive writes', async () => {
    const file = join(dir, 'flows', 'greet.yaml')
    await writeFile(file, greet('one'))
    expect(await settle()).toEqual(['reloaded shop (flows/greet.yaml): flow greet added'])
    for (const message of ['two', 'three']) {
      await writeFile(join(dir, 'flows', '.greet.yaml.swp'), greet(message))
      await rename(join(dir, 'flows', '.greet.yaml.swp'), file)
      await settle()
      expect(workspace.get('shop')!.project.flows.get('greet')!.nodesById.get('done')!.settings).toMatchObject({ body: { message } })
    }
    for (let i = 0; i < 5; i++) await writeFile(file, greet(`quick ${i}`))
    await settle()
    expect(workspace.get('shop')!.project.flows.get('greet')!.nodesById.get('done')!.settings).toMatchObject({ body: { message: 'quick 4' } })
    await rm(file)
    expect(await settle()).toEqual(['reloaded shop (flows/greet.yaml): flow greet removed'])
  })

  it('reloads when flowctl.yaml changes, and when the flows folder goes and comes back', async () => {
    const settings = join(dir, 'flowctl.yaml')
    await writeFile(settings, (await readFile(settings, 'utf8')).replace('name: Shop API', 'name: Shop API 2'))
    await settle()
    expect(workspace.get('shop')!.project.settings.name).toBe('Shop API 2')
    const before = workspace.get('shop')!.project.flows.size
    await rename(join(dir, 'flows'), join(dir, 'flows-away'))
    await eventually(async () => workspace.get('shop')!.project.flows.size === 0, 5_000)
    await mkdir(join(dir, 'flows'))
    await writeFile(join(dir, 'flows', 'greet.yaml'), greet('back'))
    await eventually(async () => workspace.get('shop')!.project.flows.has('greet'), 5_000)
    await settle()
    await rm(join(dir, 'flows'), { recursive: true })
    await rename(join(dir, 'flows-away'), join(dir, 'flows'))
    await eventually(async () => workspace.get('shop')!.project.flows.size === before, 5_000)
    await settle()
  })
})
