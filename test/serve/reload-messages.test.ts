// The watcher's messages: one line per save, saying added, reloaded or removed; hidden files ignored.
import { rm, writeFile } from 'node:fs/promises'
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
})
