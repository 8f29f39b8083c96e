// Printing for every command: human text (colour only on a TTY and without NO_COLOR) or JSON.
import { Chalk, type ChalkInstance } from 'chalk'
import { formatProblem } from '../errors.js'
import type { Problem } from '../model/project.js'

export interface Output {
  readonly json: boolean
  readonly color: ChalkInstance
  /** A line on standard output. */
  line(text?: string): void
  /** A JSON document on standard output. */
  data(value: unknown): void
  /** A line on standard error. */
  error(text: string): void
  /** Problems as file:line:column lines; on standard error unless `to` is 'stdout' (validate's own output). */
  problems(problems: Problem[], to?: 'stdout' | 'stderr'): void
}

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
  env: NodeJS.ProcessEnv
}

export function createOutput(json: boolean, streams: OutputStreams): Output {
  const colorOn = Boolean(streams.stdout.isTTY) && !('NO_COLOR' in streams.env) && streams.env.TERM !== 'dumb'
  const color = new Chalk({ level: colorOn ? 1 : 0 })
  return {
    json,
    color,
    line: (text = '') => void streams.stdout.write(text + '\n'),
    data: (value) => void streams.stdout.write(JSON.stringify(value, null, 2) + '\n'),
    error: (text) => void streams.stderr.write(text + '\n'),
    problems(problems, to = 'stderr') {
      const stream = to === 'stdout' ? streams.stdout : streams.stderr
      for (const problem of problems) {
        const text = formatProblem(problem)
        stream.write((problem.severity === 'warning' ? color.yellow(text) : color.red(text)) + '\n')
      }
    },
  }
}

type Stream = OutputStreams['stdout']
const pipeWatchers = new WeakMap<Stream, Set<() => void>>()

/**
 * A reader that goes away (`flowctl history | head -1`) makes the next write fail with EPIPE, an
 * 'error' event that would end the process with a stack trace. Here, once per stream: the error is
 * taken as "nobody reads any more"; later writes to the destroyed stream are dropped by Node, and
 * `onClosed` lets the command stop (serve and test --watch) and end with its own exit code.
 * Returns the function that stops calling `onClosed`.
 */
export function whenPipeCloses(streams: Pick<OutputStreams, 'stdout' | 'stderr'>, onClosed: () => void): () => void {
  const targets = [...new Set([streams.stdout, streams.stderr])]
  for (const stream of targets) {
    let watchers = pipeWatchers.get(stream)
    if (!watchers) {
      const registered = new Set<() => void>()
      watchers = registered
      pipeWatchers.set(stream, registered)
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') throw error
        for (const watcher of registered) watcher()
      })
    }
    watchers.add(onClosed)
  }
  return () => {
    for (const stream of targets) pipeWatchers.get(stream)?.delete(onClosed)
  }
}
