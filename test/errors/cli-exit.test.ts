// The CLI's exit codes come from the error catalog (src/errors.ts): `main` maps each FlowctlError to
// its code's exitCode, usage errors to 2, I/O errors to 1, and never calls process.exit.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.js'
import { ERROR_CATALOG } from '../../src/errors.js'
import { cleanupTempDirs, copyFixture, makeTempDir, ROOT } from '../helpers.js'

async function callMain(argv: string[], cwd = ROOT): Promise<{ exitCode: number; stderr: string }> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const err: string[] = []
  stdout.resume()
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString('utf8')))
  const exitCode = await main(argv, { stdout, stderr, cwd, env: { NO_COLOR: '1' } })
  return { exitCode, stderr: err.join('') }
}

afterAll(cleanupTempDirs)

describe('exit codes from the catalog', () => {
  it('a bad flag is USAGE (2), an unreadable body file IO_FAILED (2, as before the catalog), an unknown flow FLOW_NOT_FOUND (2)', async () => {
    // A copy: commands that open the store write .flowctl/ into the project (SPEC §21: tests leave
    // fixtures/example's state to npm start).
    const project = await copyFixture('example')
    expect((await callMain(['run', 'quote', '--project', project, '--no-such-flag'])).exitCode).toBe(ERROR_CATALOG.USAGE.exitCode)
    const missing = await callMain(['run', 'quote', '--project', project, '--body', '@does-not-exist.json'])
    expect(missing).toEqual({ exitCode: 2, stderr: expect.stringContaining('cannot read the body file does-not-exist.json') })
    expect((await callMain(['run', 'nope', '--project', project])).exitCode).toBe(ERROR_CATALOG.FLOW_NOT_FOUND.exitCode)
  })

  it('users: a name not found is USER_NOT_FOUND, an invalid users file USERS_FILE_INVALID', async () => {
    const dir = await makeTempDir('flowctl-exit-')
    expect(await callMain(['users', 'remove', 'nobody'], dir)).toEqual({
      exitCode: ERROR_CATALOG.USER_NOT_FOUND.exitCode,
      stderr: expect.stringContaining('no user named "nobody"'),
    })
    await mkdir(join(dir, '.flowctl'), { recursive: true })
    await writeFile(join(dir, '.flowctl', 'users.yaml'), 'users: [oops\n')
    expect(await callMain(['users', 'list'], dir)).toEqual({
      exitCode: ERROR_CATALOG.USERS_FILE_INVALID.exitCode,
      stderr: expect.stringMatching(/users file .* is invalid/),
    })
  })

  it('init over an existing project is CONFLICT (2) and writes nothing', async () => {
    const project = await copyFixture('example')
    expect(await callMain(['init', project])).toEqual({
      exitCode: ERROR_CATALOG.CONFLICT.exitCode,
      stderr: expect.stringContaining('already has a flowctl.yaml'),
    })
  })
})
