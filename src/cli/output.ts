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
