// The servers under test: `flowctl serve`, the plain h3 baseline, and the reload baseline.
import { join } from 'node:path'
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { BENCH_DIR, FLOWCTL, ROOT } from './paths.js'
import { freePort, startChild, waitForHttp } from './proc.js'

/** Whether `npm run build` has produced dist/ and `flowctl serve` can start at all. */
export function flowctlBuilt() {
  return existsSync(join(ROOT, 'dist', 'bin', 'main.js'))
}

/**
 * `flowctl serve DIR --port N --host 127.0.0.1 --quiet`, resolved once `GET probePath` answers
 * (any status: a 404 of an unknown flow proves the router is up).
 */
export async function startFlowctl(projectDir, { env = {}, extraArgs = [], nodeArgs = [], probePath = '/api/run/bench/nope', timeoutMs = 120000 } = {}) {
  const port = await freePort()
  const started = performance.now()
  const child = startChild(
    process.execPath,
    [...nodeArgs, FLOWCTL, 'serve', projectDir, '--port', String(port), '--host', '127.0.0.1', '--quiet', ...extraArgs],
    {
      cwd: ROOT,
      env,
      name: 'flowctl serve',
    },
  )
  const url = `http://127.0.0.1:${port}`
  await waitForHttp(url + probePath, { child, timeoutMs })
  return { child, port, url, readyMs: performance.now() - started }
}

/** The plain h3 v2 route on node:http (bench/lib/h3-baseline.js). */
export async function startBaseline() {
  const port = await freePort()
  const child = startChild(process.execPath, [join(BENCH_DIR, 'lib', 'h3-baseline.js'), String(port)], { cwd: ROOT, name: 'h3 baseline' })
  const url = `http://127.0.0.1:${port}`
  await waitForHttp(url + '/order', { child })
  return { child, port, url }
}

/** Runs the flowctl CLI to completion (spawnSync); returns { status, stdout, stderr, ms }. */
export function flowctlSync(args, { env = {}, cwd = ROOT } = {}) {
  const started = performance.now()
  const result = spawnSync(process.execPath, [FLOWCTL, ...args], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, ms: performance.now() - started }
}
