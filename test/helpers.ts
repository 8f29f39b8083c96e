// Shared by e2e tests: temp copies of fixtures, the real flowctl binary, serve on a port of its own.
import { execa, type ResultPromise } from 'execa'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { StringDecoder } from 'node:string_decoder'

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

/**
 * Copies a fixture project without its local state: `.flowctl/` (the database, users, outbox) belongs
 * to whoever serves the fixture itself (`npm start` serves fixtures/example), never to a test.
 */
export async function copyProject(from: string, to: string): Promise<void> {
  await cp(from, to, { recursive: true, filter: (source) => basename(source) !== '.flowctl' })
}

/** A fresh copy of fixtures/<name> in a temp folder (removed by `cleanupTempDirs`), without its `.flowctl/`. */
export async function copyFixture(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `flowctl-${name.replace(/\W/g, '-')}-`))
  await copyProject(join(ROOT, 'fixtures', name), dir)
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

/** A `flowctl serve` started by `startServe`, listening at `base`. */
export interface StartedServe {
  child: ResultPromise
  /** `http://127.0.0.1:PORT` (as serve's banner prints it). */
  base: string
  port: number
  /** Everything serve wrote so far, stdout and stderr in the order they arrived. */
  output(): string
  /** What serve wrote so far to stdout alone. */
  stdout(): string
  /** What serve wrote so far to stderr alone. */
  stderr(): string
}

/**
 * Starts `flowctl serve ARGS --port 0` and resolves once it answers `/api/status`: serve picks its
 * own port and the URL is read from its banner (`flowctl serving on http://…`, printed even with
 * `--quiet`; not with `--json`). A port chosen beforehand (`freePort`, then spawn) can be taken by
 * another test file's connection between its close and serve's bind, and another server then
 * answers in serve's place (a full run failed so once). Rejects, with what serve wrote to stderr,
 * when serve exits first or `timeoutMs` passes (then it is killed). stdout and stderr are only
 * listened to: execa's buffered result (`(await child).stdout`) stays complete. `spawn` replaces
 * the repository's binary (e.g. an installed `flowctl`); it is given the whole argument list.
 */
export async function startServe(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; spawn?: (args: string[]) => ResultPromise } = {},
): Promise<StartedServe> {
  const timeoutMs = options.timeoutMs ?? 30_000
  const deadline = Date.now() + timeoutMs
  const fullArgs = ['serve', ...args, '--port', '0']
  const child = options.spawn ? options.spawn(fullArgs) : spawnFlowctl(fullArgs, { cwd: options.cwd, env: options.env })
  let output = ''
  let stdout = ''
  let stderr = ''
  const stdoutText = new StringDecoder('utf8')
  const stderrText = new StringDecoder('utf8')
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = stdoutText.write(chunk)
    stdout += text
    output += text
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = stderrText.write(chunk)
    stderr += text
    output += text
  })
  const stop = async () => {
    child.kill('SIGKILL')
    await child.catch(() => undefined)
  }
  const base = await new Promise<string>((resolveBase, reject) => {
    const failed = (why: string) => reject(new Error(`flowctl ${fullArgs.join(' ')}: ${why}; stderr:\n${stderr}`))
    const timer = setTimeout(() => {
      failed(`no "serving on" banner within ${timeoutMs} ms`)
      void stop()
    }, timeoutMs)
    const onData = () => {
      const url = /serving on (http:\/\/\S+)/.exec(stdout)?.[1]
      if (!url) return
      clearTimeout(timer)
      child.stdout?.off('data', onData)
      resolveBase(url)
    }
    child.stdout?.on('data', onData)
    const ended = (result: unknown) => {
      clearTimeout(timer)
      const code = (result as { exitCode?: number; signal?: string } | undefined) ?? {}
      failed(`exited before it listened (exit code ${String(code.exitCode)}${code.signal ? `, signal ${code.signal}` : ''})`)
    }
    child.then(ended, ended)
  })
  try {
    await waitForServer(`${base}/api/status`, Math.max(deadline - Date.now(), 1_000))
  } catch (error) {
    await stop()
    throw new Error(`${(error as Error).message}; stderr:\n${stderr}`, { cause: error })
  }
  return { child, base, port: Number(new URL(base).port), output: () => output, stdout: () => stdout, stderr: () => stderr }
}

/** `count` serve instances started at once (e.g. on one database); when one fails, the others are killed. */
export async function startServes(count: number, args: string[], options: Parameters<typeof startServe>[1] = {}): Promise<StartedServe[]> {
  const settled = await Promise.allSettled(Array.from({ length: count }, () => startServe(args, options)))
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const failed = settled.find((s) => s.status === 'rejected')
  if (!failed) return started
  for (const { child } of started) child.kill('SIGKILL')
  await Promise.all(started.map(({ child }) => child.catch(() => undefined)))
  throw failed.reason
}

/**
 * A port nothing listens on right now. Only for a port that must be unused (connection refused):
 * a port picked here and then bound by a server can be taken by someone else in between, so start
 * serve with `startServe` and other servers with `listen(0)`.
 */
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
