// reloadProject on a temp copy of fixtures/example: edit, break, fix, add, delete, settings changes.
import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FlowctlError } from '../../src/errors.js'
import { loadProject, reloadProject } from '../../src/project/load.js'
import type { Project } from '../../src/model/project.js'
import { copyProject, EXAMPLE_FLOW_SLUGS } from '../helpers.js'

const EXAMPLE = join(import.meta.dirname, '..', '..', 'fixtures', 'example')
let dir: string
let project: Project

const flowPath = (name: string) => join(dir, 'flows', name)
async function edit(name: string, change: (text: string) => string): Promise<string> {
  const path = flowPath(name)
  await writeFile(path, change(await readFile(path, 'utf8')))
  return path
}
const errorsOf = (p: Project) => p.problems.filter((problem) => problem.severity === 'error')

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-reload-'))
  await copyProject(EXAMPLE, dir)
  project = await loadProject(dir, { env: {} })
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('reloadProject', () => {
  it('re-reads only the changed file and leaves the previous project untouched', async () => {
    const path = await edit('quote.yaml', (text) => text.replace('name: Quote', 'name: Price Quote'))
    const next = await reloadProject(project, [path])
    expect(next).not.toBe(project)
    // bulk-quote still calls "quote": now a load problem, so it keeps its last good version.
    // quote.yaml now holds price-quote.
    expect([...next.flows.keys()].sort()).toEqual(EXAMPLE_FLOW_SLUGS.map((slug) => (slug === 'quote' ? 'price-quote' : slug)).sort())
    expect(errorsOf(next)).toMatchObject([
      { file: 'flows/bulk-quote.yaml', message: expect.stringContaining('there is no flow with the slug "quote" to call') },
    ])
    expect(project.flows.has('quote')).toBe(true)
    expect(project.flows.has('price-quote')).toBe(false)
    // Unchanged files are not parsed again: their Flow objects are reused.
    expect(next.flows.get('create-order')).toBe(project.flows.get('create-order'))
    expect(next.flows.get('price-quote')?.version).not.toBe(project.flows.get('quote')?.version)
  })

  it('keeps the last good version of a flow whose file became invalid, and reports the problem', async () => {
    const path = await edit('create-order.yaml', (text) => text.replace('    name: Big Order\n', '    name: Big Order\n    nxt: save\n'))
    const broken = await reloadProject(project, [path])
    expect(broken.flows.get('create-order')).toBe(project.flows.get('create-order'))
    expect(errorsOf(broken)).toMatchObject([
      { file: 'flows/create-order.yaml', line: 24, column: 5, message: expect.stringContaining('"nxt" is not a setting of an if node') },
    ])

    const fixed = await reloadProject(broken, [await edit('create-order.yaml', (text) => text.replace('    nxt: save\n', '    description: fixed\n'))])
    expect(errorsOf(fixed)).toEqual([])
    expect(fixed.flows.get('create-order')?.nodesById.get('check')?.settings.description).toBe('fixed')
  })

  it('a new invalid file has no previous version and stays out', async () => {
    await writeFile(flowPath('new.yaml'), 'name: New\nnodes: []\n')
    const next = await reloadProject(project, [flowPath('new.yaml')])
    expect(next.flows.has('new')).toBe(false)
    expect(errorsOf(next)).toMatchObject([{ file: 'flows/new.yaml', line: 2, column: 8, message: expect.stringContaining('nodes must have at least 1 item') }])
  })

  it('drops the flow of a deleted file', async () => {
    await unlink(flowPath('fetch-status.yaml'))
    const next = await reloadProject(project, [flowPath('fetch-status.yaml')])
    expect(next.flows.has('fetch-status')).toBe(false)
    expect(next.flows.size).toBe(11)
  })

  it('re-runs the cross-file checks: an added file with a taken slug is an error naming both files', async () => {
    const copy = await readFile(flowPath('quote.yaml'), 'utf8')
    await writeFile(flowPath('quote-copy.yaml'), copy)
    const next = await reloadProject(project, [flowPath('quote-copy.yaml')])
    const messages = errorsOf(next).map((p) => `${p.file}: ${p.message}`)
    expect(messages).toEqual([
      'flows/quote-copy.yaml: the flow slug "quote" is used by both flows/quote-copy.yaml and flows/quote.yaml; give each flow its own name',
      'flows/quote.yaml: the flow slug "quote" is used by both flows/quote-copy.yaml and flows/quote.yaml; give each flow its own name',
    ])
    // quote.yaml did not change: its last good version is still served; the copy is not.
    expect(next.flows.get('quote')).toBe(project.flows.get('quote'))
    expect(next.flows.get('quote')?.file).toBe('flows/quote.yaml')

    await unlink(flowPath('quote-copy.yaml'))
    const resolved = await reloadProject(next, [flowPath('quote-copy.yaml')])
    expect(errorsOf(resolved)).toEqual([])
  })

  it('reloads everything when the dotenv file changes', async () => {
    await writeFile(join(dir, '.env'), 'ORDERS_TOKEN=rotated\n')
    const next = await reloadProject(project, [join(dir, '.env')])
    expect(next.secrets.get('ORDERS_TOKEN')).toBe('rotated')
    expect(next.flows.size).toBe(12)
  })

  it('reloads everything when flowctl.yaml changes, keeping last good versions of now-invalid flows', async () => {
    await edit('nightly-cleanup.yaml', (text) => text.replace('  timezone: Europe/Berlin\n', ''))
    await edit('create-order.yaml', (text) => text.replace('type: if', 'type: iff'))
    const settings = join(dir, 'flowctl.yaml')
    await writeFile(settings, (await readFile(settings, 'utf8')).replace('timezone: UTC', 'timezone: America/New_York'))
    const next = await reloadProject(project, [settings])
    expect(next.settings.timezone).toBe('America/New_York')
    expect(next.flows.get('nightly-cleanup')?.schedule?.timezone).toBe('America/New_York')
    expect(next.flows.get('create-order')).toBe(project.flows.get('create-order'))
    expect(errorsOf(next)).toMatchObject([{ file: 'flows/create-order.yaml', message: expect.stringContaining('"iff" is not a node type') }])
  })

  it('throws PROJECT_INVALID when flowctl.yaml became invalid', async () => {
    const settings = join(dir, 'flowctl.yaml')
    await writeFile(settings, (await readFile(settings, 'utf8')).replace('projectId: shop', 'projectId: "Shop Two"'))
    const error = await reloadProject(project, [settings]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(FlowctlError)
    expect((error as FlowctlError).code).toBe('PROJECT_INVALID')
  })

  it('ignores paths outside the flows folder and other extensions', async () => {
    await writeFile(flowPath('readme.md'), '# notes')
    const next = await reloadProject(project, [flowPath('readme.md'), join(dir, 'other', 'x.yaml')])
    expect([...next.flows.keys()]).toEqual([...project.flows.keys()])
    expect(next.problems).toEqual(project.problems)
  })
})
