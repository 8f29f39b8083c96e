// Shared by e2e tests: temp copies of fixtures, the real flowctl binary, free ports.
import { execa, type ResultPromise } from 'execa'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dirname, '..')
export const BIN = join(ROOT, 'bin', 'flowctl.js')

/** The flows of fixtures/example, by slug, in the order a project lists them. */
export const EXAMPLE_FLOW_SLUGS = [
  'bulk-quote',
  'create-order',
  'create-ticket',
  'delete-ticket',
  'fetch-status',
  'get-ticket',
  'list-tickets',
  'nightly-cleanup',
  'order-status',
  'quote',
  'stock-check',
  'update-ticket',
]

const made: string[] = []

/** A fresh copy of fixtures/<name> in a temp folder (removed by `cleanupTempDirs`). */
export async function copyFixture(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `flowctl-${name.replace(/\W/g, '-')}-`))
  await cp(join(ROOT, 'fixtures', name), dir, { recursive: true })
  made.push(dir)
  return dir
}

export async function makeTempDir(prefix = 'flowctl-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

export async function cleanupTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
}

/** Runs the real `flowctl` binary to completion; never throws on a non-zero exit. */
export async function flowctl(args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}) {
  const result = await execa('node', [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { NO_COLOR: '1', ...options.env },
    input: options.input,
    reject: false,
    timeout: 60_000,
  })
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) }
}

/** Starts the real binary in the background (e.g. `serve`). */
export function spawnFlowctl(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): ResultPromise {
  return execa('node', [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { NO_COLOR: '1', ...options.env },
    reject: false,
    buffer: true,
  })
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolvePort(port))
    })
  })
}

/** Polls `url` until it answers (any status) or the time is up. */
export async function waitForServer(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  while (Date.now() < deadline) {
    try {
      await fetch(url)
      return
    } catch (error) {
      lastError = error
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  throw new Error(`server at ${url} did not start: ${String(lastError)}`)
}

/** Polls `check` until it returns true or the time is up. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, everyMs))
  }
  throw new Error(`condition not met within ${timeoutMs} ms`)
}

/**
 * Waits, when less than `marginMs` of the current minute is left, until the next minute begins: the
 * rate limiter counts in fixed one-minute windows, and a test that counts requests against a limit
 * must not straddle two of them (the count restarts at the boundary).
 */
export async function awayFromMinuteEnd(marginMs = 10_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000)
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50))
}
