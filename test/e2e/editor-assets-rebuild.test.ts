// The browser editor's bundle rebuilt while `serve` runs (`npm run build` in another terminal): the
// next request gets the new files without a restart. The real binary runs from a copy of the built
// package (bin/, dist/, package.json) under test-output/, so the test rebuilds the copy's
// dist/editor/ as the build does (the folder emptied, then written again) and leaves the
// repository's own build alone; node_modules is found from there as from the repository.
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { execa, type ResultPromise } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, ROOT, startServe } from '../helpers.js'

describe('editor assets after a rebuild', () => {
  let copy: string
  let server: ResultPromise
  let base: string

  beforeAll(async () => {
    copy = join(ROOT, 'test-output', `rebuilt-editor-${process.pid}`)
    await rm(copy, { recursive: true, force: true })
    for (const part of ['bin', 'dist', 'package.json']) await cp(join(ROOT, part), join(copy, part), { recursive: true })
    const project = await copyFixture('example')
    const started = await startServe([project, '--quiet', '--no-watch'], {
      spawn: (args) => execa('node', [join(copy, 'bin', 'flowctl.js'), ...args], { cwd: project, env: { NO_COLOR: '1' }, reject: false }),
    })
    server = started.child
    base = started.base
  }, 60_000)

  afterAll(async () => {
    server?.kill('SIGTERM')
    await server
    await rm(copy, { recursive: true, force: true })
    await cleanupTempDirs()
  })

  const asset = async (name: string) => {
    const response = await fetch(`${base}/edit/_assets/${name}`)
    return { status: response.status, text: await response.text() }
  }
  /** A request as a browser that holds the file makes it: with the tag it was given. */
  const revalidate = async (name: string, etag: string) => {
    const response = await fetch(`${base}/edit/_assets/${name}`, { headers: { 'if-none-match': etag } })
    return { status: response.status, text: await response.text(), etag: response.headers.get('etag') }
  }

  it('serves the rebuilt editor.js, keeps the last copy while the folder is rebuilt, and finds a new chunk', async () => {
    const editorDir = join(copy, 'dist', 'editor')
    const first = await readFile(join(editorDir, 'editor.js'), 'utf8')
    const firstResponse = await fetch(`${base}/edit/_assets/editor.js`)
    expect({ status: firstResponse.status, text: await firstResponse.text() }).toEqual({ status: 200, text: first })
    // Revalidated on every load (no-cache), and while the file is the same, a 304 with no body.
    expect(firstResponse.headers.get('cache-control')).toContain('no-cache')
    const firstTag = firstResponse.headers.get('etag')!
    expect(firstTag).toMatch(/^W\/"[0-9a-f]+-[0-9a-f]+"$/)
    expect(await revalidate('editor.js', firstTag)).toEqual({ status: 304, text: '', etag: firstTag })

    // The build empties the folder first: meanwhile the copy in memory is still served.
    await rm(editorDir, { recursive: true })
    expect(await asset('editor.js')).toEqual({ status: 200, text: first })
    expect((await revalidate('editor.js', firstTag)).status).toBe(304)

    const rebuilt = `${first}\n// rebuilt while serve ran\n`
    await mkdir(editorDir)
    await writeFile(join(editorDir, 'editor.js'), rebuilt)
    await writeFile(join(editorDir, 'extra-chunk.js'), 'export const added = 1\n')
    // The browser's tag is the old file's: it gets the new one, with a new tag.
    const afterRebuild = await revalidate('editor.js', firstTag)
    expect(afterRebuild).toMatchObject({ status: 200, text: rebuilt })
    expect(afterRebuild.etag).not.toBe(firstTag)
    expect(await revalidate('editor.js', afterRebuild.etag!)).toEqual({ status: 304, text: '', etag: afterRebuild.etag })
    expect(await asset('editor.js')).toEqual({ status: 200, text: rebuilt })
    expect(await asset('extra-chunk.js')).toEqual({ status: 200, text: 'export const added = 1\n' })
    // Names outside what the build wrote are still refused.
    expect((await asset('missing-chunk.js')).status).toBe(404)
  }, 30_000)
})
