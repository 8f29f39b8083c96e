// The CLI called in-process through `main(argv, options)`, the way bin/flowctl.js calls it, with the
// test's own streams, cwd and env: exit codes and output without spawning a process.
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.js'
import { cleanupTempDirs, copyFixture, ROOT } from '../helpers.js'

interface Captured {
  exitCode: number
  stdout: string
  stderr: string
}

/** Runs one command line in this process and collects what it printed. */
async function callMain(argv: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Captured> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const out: string[] = []
  const err: string[] = []
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')))
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString('utf8')))
  const exitCode = await main(argv, { stdout, stderr, cwd: options.cwd ?? ROOT, env: { NO_COLOR: '1', ...options.env } })
  return { exitCode, stdout: out.join(''), stderr: err.join('') }
}

afterAll(cleanupTempDirs)

describe('main(argv, options) in-process', () => {
  it('validates the example project from the injected cwd, in JSON', async () => {
    const result = await callMain(['validate', '--json'], { cwd: `${ROOT}/fixtures/example` })
    expect(result.exitCode).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, problems: [] })
  })

  it('reports a broken flow file with file:line:column and exits 1 (a failed check)', async () => {
    const result = await callMain(['validate', '--project', 'fixtures/broken/yaml-syntax'])
    expect(result.exitCode).toBe(1)
    expect(result.stdout + result.stderr).toMatch(/flows\/bad\.yaml:5:13: YAML syntax error/)
    expect(result.stdout + result.stderr).not.toMatch(/\n\s+at /)
  })

  it('exits 2 on an unknown flag, with a hint and no stack trace', async () => {
    const result = await callMain(['validate', '--nope'])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain("unknown option '--nope'")
    expect(result.stderr).toContain('--help')
  })

  it('prints help on the injected stdout and exits 0', async () => {
    const result = await callMain(['--help'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain('Usage: flowctl')
    expect(result.stdout).toContain('export-openapi')
  })

  it('runs a flow, records it, and history shows it', async () => {
    const dir = await copyFixture('example')
    const run = await callMain(['run', 'quote', '--body', '{"items":[{"sku":"A-1","price":2.5,"qty":2},{"sku":"B-2","price":1}]}', '--json'], { cwd: dir })
    expect(run.exitCode).toBe(0)
    const answer = JSON.parse(run.stdout) as { status: number; body: { total: number; currency: string }; runId: string }
    expect(answer.status).toBe(200)
    expect(answer.body.total).toBe(6)
    expect(answer.body.currency).toBe('EUR')

    const history = await callMain(['history', '--flow', 'quote', '--json'], { cwd: dir })
    expect(history.exitCode).toBe(0)
    expect(history.stdout).toContain(answer.runId)
  })

  it('exits 1 on a run whose input is rejected, and prints the reason', async () => {
    const dir = await copyFixture('example')
    const run = await callMain(['run', 'quote', '--body', '{"items":[]}', '--json'], { cwd: dir })
    expect(run.exitCode).toBe(1)
    const answer = JSON.parse(run.stdout) as { status: number; body: { errors?: unknown[] } }
    expect(answer.status).toBe(400)
    expect(JSON.stringify(answer.body)).toContain('items')
  })

  it('reads FLOWCTL_* settings from the injected env, not the process env', async () => {
    const dir = await copyFixture('example')
    const result = await callMain(['history', '--json'], { cwd: dir, env: { FLOWCTL_DATABASE_URL: 'mysql://nowhere/x' } })
    expect(result.exitCode).not.toBe(0)
    expect(result.stdout + result.stderr).toMatch(/mysql|database/i)
  })
})
