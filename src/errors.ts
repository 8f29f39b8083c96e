// One error model for the whole tool: every failure a user can meet has a code here, with the HTTP
// status `flowctl serve` answers (rendered by the one `onError` of src/http/app.ts), the exit code
// the CLI returns (src/cli/main.ts) and the default message. Messages are written for the person
// who wrote the flow file; the README's "Errors" table lists the same codes.
import type { Problem } from './model/project.js'

export interface ErrorKind {
  httpStatus: number
  exitCode: number
  /** What an HTTP client (or the CLI, without a more precise message) is told. */
  message: string
}

export const ERROR_CATALOG = {
  /** A command line the CLI cannot take (bad flag, value or argument). */
  USAGE: { httpStatus: 400, exitCode: 2, message: 'bad request' },
  /** A request the server cannot read (malformed URL escape, the client hung up mid-body). */
  BAD_REQUEST: { httpStatus: 400, exitCode: 2, message: 'bad request' },
  /** Inputs that fail the Start's schemas, a body that is not JSON, a bad query flag. */
  INPUT_INVALID: { httpStatus: 400, exitCode: 1, message: 'invalid input' },
  /** No or a wrong credential (flow auth, user token, CRON_SECRET); carries `WWW-Authenticate`. */
  AUTH_REQUIRED: { httpStatus: 401, exitCode: 1, message: 'invalid token' },
  /** Signed in without the role needed, or a cross-site POST. */
  FORBIDDEN: { httpStatus: 403, exitCode: 1, message: 'forbidden' },
  /** No route, no asset. */
  NOT_FOUND: { httpStatus: 404, exitCode: 1, message: 'not found' },
  PROJECT_NOT_FOUND: { httpStatus: 404, exitCode: 2, message: 'project not found' },
  FLOW_NOT_FOUND: { httpStatus: 404, exitCode: 2, message: 'flow not found' },
  RUN_NOT_FOUND: { httpStatus: 404, exitCode: 1, message: 'run not found' },
  /** `flowctl users remove|grant NAME` with a name the users file does not hold. */
  USER_NOT_FOUND: { httpStatus: 404, exitCode: 2, message: 'user not found' },
  /** A method other than the Start's (or OPTIONS); carries `Allow`. */
  METHOD_NOT_ALLOWED: { httpStatus: 405, exitCode: 2, message: 'method not allowed' },
  /** A run that kept no input (history.keep) cannot be replayed. */
  REPLAY_UNAVAILABLE: { httpStatus: 409, exitCode: 1, message: 'replay unavailable' },
  /** A resume URL posted to again: the run was resumed already, or does not wait for a callback now (SPEC §22). */
  RUN_NOT_WAITING: { httpStatus: 409, exitCode: 1, message: 'the run was already resumed' },
  /** An idempotency key whose first request is still running; carries `Retry-After`. */
  IDEMPOTENCY_IN_PROGRESS: { httpStatus: 409, exitCode: 1, message: 'a request with this key is still running' },
  /**
   * Something already there stops the command: a flowctl.yaml (`init`), a user of that name, the
   * users file locked by another command. Exit 2, as the command must be given differently.
   */
  CONFLICT: { httpStatus: 409, exitCode: 2, message: 'conflict' },
  /** A flows API write whose `baseVersion` is not the file's version on disk (the answer carries both). */
  FLOW_CHANGED: { httpStatus: 409, exitCode: 1, message: 'the file changed on disk' },
  /** A resume URL posted to after its wait's timeout (the run went on at port `timeout`). */
  RESUME_EXPIRED: { httpStatus: 410, exitCode: 1, message: 'the wait is past its timeout' },
  /** The body is larger than `limits.bodyLimitBytes`. */
  BODY_TOO_LARGE: { httpStatus: 413, exitCode: 1, message: 'request body too large' },
  /** A Content-Type the Start's `accept` does not list. */
  UNSUPPORTED_MEDIA_TYPE: { httpStatus: 415, exitCode: 1, message: 'unsupported content type' },
  /** An idempotency key sent again with a different request. */
  IDEMPOTENCY_MISMATCH: { httpStatus: 422, exitCode: 1, message: 'the key was already used with a different request' },
  /** A flow file's text sent to the flows API that is not YAML (or JSON, for a `.json` file): nothing is written. */
  FLOW_TEXT_INVALID: { httpStatus: 422, exitCode: 1, message: 'the text is not YAML' },
  /** Past `limits.runsPerMinutePerIp`, or too many failed tick secrets; carries `Retry-After`. */
  RATE_LIMITED: { httpStatus: 429, exitCode: 1, message: 'rate limit exceeded' },
  /** Every concurrency slot of the flow is taken (`onLimit: reject`); carries `Retry-After`. */
  FLOW_BUSY: { httpStatus: 429, exitCode: 1, message: 'flow busy' },
  /** The store cannot be opened, read or written (the run is not recorded, so it is refused). */
  STORE_UNAVAILABLE: { httpStatus: 503, exitCode: 1, message: 'store unavailable' },
  /** Flow files or flowctl.yaml with errors. */
  PROJECT_INVALID: { httpStatus: 500, exitCode: 1, message: 'project invalid' },
  /** The users file is not valid YAML of users. */
  USERS_FILE_INVALID: { httpStatus: 500, exitCode: 2, message: 'users file invalid' },
  /** A run ended on a failed node (the Run API's 500 carries the run id; `flowctl run` exits 1). */
  NODE_FAILED: { httpStatus: 500, exitCode: 1, message: 'node failed' },
  /** A run went past `limits.runTimeoutMs`. */
  RUN_TIMEOUT: { httpStatus: 500, exitCode: 1, message: 'run timed out' },
  /** `validate`, `test`, `tick`, `backfill` or `export-openapi --check` found something wrong. */
  CHECK_FAILED: { httpStatus: 500, exitCode: 1, message: 'check failed' },
  /** A file could not be read or written (body file, users file, report). */
  IO_FAILED: { httpStatus: 500, exitCode: 2, message: 'file error' },
  /** `serve` could not listen (port in use, no permission): the environment, not the command line. */
  LISTEN_FAILED: { httpStatus: 500, exitCode: 1, message: 'cannot listen' },
  /** Anything unexpected: answered without internals and logged once. */
  INTERNAL: { httpStatus: 500, exitCode: 1, message: 'internal error' },
} as const satisfies Record<string, ErrorKind>

export type ErrorCode = keyof typeof ERROR_CATALOG

export interface FlowctlErrorOptions {
  /** Load problems with file:line:column, when the error is about files. */
  problems?: Problem[]
  cause?: unknown
  /** What an HTTP client is told, a line each (default: the catalog's message, never `message`). */
  errors?: string[]
  /** Response headers the answer needs: `WWW-Authenticate`, `Allow`, `Retry-After`, CORS. */
  headers?: Record<string, string>
  /** Fields the HTTP answer carries beside `ok` and `errors` (e.g. `replayOf`, `hint`). */
  fields?: Record<string, unknown>
}

/** Whether catalog errors capture stack frames: only when asked (the CLI's --debug). */
let catalogFrames = false

/** Catalog errors made from now on keep their stack frames (`--debug`), or capture none again. */
export function keepCatalogErrorFrames(keep: boolean): void {
  catalogFrames = keep
}

export class FlowctlError extends Error {
  readonly code: ErrorCode
  readonly httpStatus: number
  readonly exitCode: number
  readonly problems: Problem[]
  /** The `errors` of the HTTP body. The message may name files or servers; this list is public. */
  readonly errors: readonly string[]
  readonly headers: Readonly<Record<string, string>> | undefined
  readonly fields: Readonly<Record<string, unknown>> | undefined

  constructor(code: ErrorCode, message: string = ERROR_CATALOG[code].message, options: FlowctlErrorOptions = {}) {
    // A catalog error is an answer (a 401, 404, 429 …), not a bug: nobody reads its stack (the CLI
    // prints the message, the server the body), yet h3 copies `stack` from every error it catches,
    // which formats it. Captured without frames, a refused request costs less (docs/performance.md:
    // a flood of 404s or 401s is what a hostile caller sends). Under --debug the frames are kept.
    const stackTraceLimit = Error.stackTraceLimit
    if (!catalogFrames) Error.stackTraceLimit = 0
    super(message, { cause: options.cause })
    Error.stackTraceLimit = stackTraceLimit
    this.name = 'FlowctlError'
    this.code = code
    const kind: ErrorKind = ERROR_CATALOG[code]
    this.httpStatus = kind.httpStatus
    this.exitCode = kind.exitCode
    this.problems = options.problems ?? []
    this.errors = options.errors ?? [kind.message]
    this.headers = options.headers
    this.fields = options.fields
  }
}

/**
 * An error meant for an HTTP client: its `errors` are the ones given (the message is their first
 * line). Routes throw these; `onError` renders them.
 */
export function httpError(code: ErrorCode, errors?: string[], options: Omit<FlowctlErrorOptions, 'errors'> = {}): FlowctlError {
  return new FlowctlError(code, errors?.[0], { ...options, errors })
}

export function isFlowctlError(error: unknown): error is FlowctlError {
  return error instanceof FlowctlError
}

/** True when `error` or one of its causes (a few levels deep) is a FlowctlError of `code`. */
export function hasErrorCode(error: unknown, code: ErrorCode): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    // Duck-typed, as errors from another realm (a worker thread) may carry the code without the class.
    if ((e as { code?: unknown }).code === code) return true
  }
  return false
}

/** `file:line:column: message`, the one format every command prints problems in. */
export function formatProblem(problem: Problem): string {
  const tag = problem.severity === 'warning' ? 'warning: ' : ''
  return `${problem.file}:${problem.line}:${problem.column}: ${tag}${problem.message}`
}
