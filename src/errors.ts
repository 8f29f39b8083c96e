// One error model for the whole tool: a code from the catalog, the HTTP status the server answers
// and the exit code the CLI returns. Messages are written for the person who wrote the flow file.
import type { Problem } from './model/project.js'

export const ERROR_CATALOG = {
  USAGE: { httpStatus: 400, exitCode: 2 },
  PROJECT_INVALID: { httpStatus: 500, exitCode: 1 },
  PROJECT_NOT_FOUND: { httpStatus: 404, exitCode: 2 },
  FLOW_NOT_FOUND: { httpStatus: 404, exitCode: 2 },
  RUN_NOT_FOUND: { httpStatus: 404, exitCode: 1 },
  /** A run that kept no input (history.keep) cannot be replayed. */
  REPLAY_UNAVAILABLE: { httpStatus: 409, exitCode: 1 },
  INPUT_INVALID: { httpStatus: 400, exitCode: 1 },
  NODE_FAILED: { httpStatus: 500, exitCode: 1 },
  RUN_TIMEOUT: { httpStatus: 500, exitCode: 1 },
  STORE_UNAVAILABLE: { httpStatus: 503, exitCode: 1 },
  CHECK_FAILED: { httpStatus: 500, exitCode: 1 },
  /** `serve` could not listen (port in use, no permission): the environment, not the command line. */
  LISTEN_FAILED: { httpStatus: 500, exitCode: 1 },
} as const

export type ErrorCode = keyof typeof ERROR_CATALOG

export class FlowctlError extends Error {
  readonly code: ErrorCode
  readonly httpStatus: number
  readonly exitCode: number
  /** Load problems with file:line:column, when the error is about files. */
  readonly problems: Problem[]

  constructor(code: ErrorCode, message: string, options: { problems?: Problem[]; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'FlowctlError'
    this.code = code
    this.httpStatus = ERROR_CATALOG[code].httpStatus
    this.exitCode = ERROR_CATALOG[code].exitCode
    this.problems = options.problems ?? []
  }
}

export function isFlowctlError(error: unknown): error is FlowctlError {
  return error instanceof FlowctlError
}

/** `file:line:column: message`, the one format every command prints problems in. */
export function formatProblem(problem: Problem): string {
  const tag = problem.severity === 'warning' ? 'warning: ' : ''
  return `${problem.file}:${problem.line}:${problem.column}: ${tag}${problem.message}`
}
