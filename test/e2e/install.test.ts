// The install story from the README, for real: `npm pack`, `npm install -g --prefix <tmp>` of the
// tarball (better-sqlite3 compiles here, so this takes a minute or more), then the installed
// `flowctl` command runs init, validate, run and serve outside the checkout, and installing printed
// no warning of flowctl's own (no prepare script, no @scarf/scarf telemetry postinstall).
import { execa } from 'execa'
import { existsSync, readFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, makeTempDir, ROOT, startServe } from '../helpers.js'

afterAll(cleanupTempDirs)

/** Lines npm prints about this machine's own npm configuration, not about what is installed. */
const MACHINE_NOTICES = /Unknown (user|project|env) config/

describe('installing the packed package', () => {
  let prefix: string
  let installLog: string
  let env: Record<string, string>
  let work: string
  let dir: string

  beforeAll(async () => {
    dir = await makeTempDir('flowctl-install-')
    prefix = join(dir, 'prefix')
    work = join(dir, 'work')
    // `npm test` has just built dist/; packing again would only repeat the build (prepack).
    expect(existsSync(join(ROOT, 'dist', 'bin', 'main.js'))).toBe(true)
    const packed = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT })
    const tarball = join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename)
    const installed = await execa(
      'npm',
      ['install', '-g', '--prefix', prefix, '--allow-scripts=better-sqlite3', '--no-audit', '--no-fund', '--no-update-notifier', tarball],
      { cwd: dir, env: { JOBS: '2' }, all: true },
    )
    installLog = installed.all ?? ''
    env = { PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH}`, NO_COLOR: '1' }
  }, 20 * 60_000)

  const flowctl = (args: string[], cwd = work) => execa('flowctl', args, { cwd, env, reject: false, timeout: 60_000 })

  it('installs without a warning of its own, and without swagger-ui-dist or @scarf/scarf', async () => {
    const warnings = installLog.split('\n').filter((line) => /warn|error/i.test(line) && !MACHINE_NOTICES.test(line))
    expect(warnings).toEqual([])
    const installedDeps = await readdir(join(prefix, 'lib', 'node_modules', 'flowctl', 'node_modules'))
    expect(installedDeps).not.toContain('swagger-ui-dist')
    expect(installedDeps).not.toContain('@scarf')
  })

  it('runs init, validate, run and serve from the installed command', async () => {
    const init = await flowctl(['init', 'work'], dir)
    expect(init.exitCode, init.stderr).toBe(0)
    // The $schema init wrote resolves to the installed package's schema.
    const reference = /\$schema=(\S+)/.exec(readFileSync(join(work, 'flows', 'hello.yaml'), 'utf8'))?.[1] ?? ''
    expect(fileURLToPath(reference)).toBe(join(prefix, 'lib', 'node_modules', 'flowctl', 'schema', 'flow.schema.json'))
    expect(existsSync(fileURLToPath(reference))).toBe(true)

    const validate = await flowctl(['validate'])
    expect(validate.exitCode).toBe(0)
    expect(validate.stdout).toContain('ok (0 errors, 0 warnings)')

    const run = await flowctl(['run', 'hello', '--query', 'name=Ada', '--json'])
    expect(run.exitCode, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).body.message).toBe('Hello, Ada!')

    // The installed command, on a port it picks itself (its banner names it).
    const { child: server, base } = await startServe([], { spawn: (args) => execa('flowctl', args, { cwd: work, env, reject: false }) })
    try {
      const answer = await fetch(`${base}/api/run/work/hello?name=Grace`)
      expect(answer.status).toBe(200)
      expect(await answer.json()).toMatchObject({ message: 'Hello, Grace!' })
      // The docs page's assets come from the package itself (vendored at build).
      const bundle = await fetch(`${base}/docs/assets/swagger-ui-bundle.js`)
      expect(bundle.status).toBe(200)
      expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000)
    } finally {
      server.kill('SIGTERM')
      await server
    }
  }, 120_000)
})
