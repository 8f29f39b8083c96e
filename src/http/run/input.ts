// Between the checks and the run: what the engine is given. Path values by the Start's parameter
// names, the query, only the header names the Start declares (credentials and cookies never reach a
// node's output, a trace or history), the body; and `?_trace=1` for those the project's `trace`
// setting allows (SPEC §17; for others the flag is ignored, a bad value is a 400).
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { Project, StartInfo } from '../../model/project.js'
import type { RunInput } from '../../model/run.js'
import type { Store } from '../../model/store.js'
import { isLoopbackRequest } from '../access.js'
import type { AppContext } from '../context.js'
import { isDangerousKey, queryRecord } from '../run-path.js'
import type { RunBody } from './body.js'
import type { RunCors } from './preflight.js'
import type { RunTarget } from './resolve.js'

/** One call of the Run API after its checks: what the guards and the engine need. */
export interface RunCall {
  target: RunTarget
  store: Store
  /** Upper case. */
  method: string
  input: RunInput
  trace: boolean
  cors: RunCors
}

const TRACE_VALUES = new Set(['1', 'true', '0', 'false'])

export function runCall(context: AppContext, event: H3Event, target: RunTarget, method: string, body: RunBody, store: Store, cors: RunCors): RunCall {
  const { start, path } = target
  // Most calls carry no query string: skip building URLSearchParams for them.
  const searchParams = event.url.search === '' ? null : event.url.searchParams
  const trace = traceWanted(context, event, target.project, searchParams)
  const pathValues: Record<string, string> = {}
  // defineProperty, as Object.fromEntries would: a parameter named `__proto__` stays a plain key.
  for (let i = 0; i < start.pathParams.length; i++) {
    Object.defineProperty(pathValues, start.pathParams[i]!, { value: path.params[i]!, enumerable: true, writable: true, configurable: true })
  }
  const input: RunInput = {
    body: body.body,
    path: pathValues,
    query: searchParams ? queryRecord(searchParams) : {},
    headers: declaredHeaders(start, event.req.headers),
  }
  if (body.type) input.bodyType = body.type
  return { target, store, method, input, trace, cors }
}

/** `?_trace=1` (or `true`): honoured for whom the project's `trace` setting allows (default loopback). */
function traceWanted(context: AppContext, event: H3Event, project: Project, searchParams: URLSearchParams | null): boolean {
  const flag = searchParams?.get('_trace') ?? null
  if (flag === null || !traceAllowed(context, event, project)) return false
  if (!TRACE_VALUES.has(flag)) throw httpError('INPUT_INVALID', [`query/_trace: must be 1 or true (0 or false to turn it off), got "${flag.slice(0, 20)}"`])
  return flag === '1' || flag === 'true'
}

/** `trace: loopback` (default) gives traces to requests from this machine only (socket and Host). */
function traceAllowed(context: AppContext, event: H3Event, project: Project): boolean {
  const access = project.settings.trace
  return access === 'anyone' || (access !== 'never' && isLoopbackRequest(context, event))
}

/** The values of the header names the Start declares. */
function declaredHeaders(start: StartInfo, headers: Headers): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of declaredHeaderNames(start)) {
    const value = headers.get(name)
    if (value !== null) out[name] = value
  }
  return out
}

/** The lower-case header names a Start declares (dangerous keys left out). */
function declaredHeaderNames(start: StartInfo): string[] {
  const schema = start.inputs.headers
  const names = new Set<string>()
  if (schema) {
    const properties = schema.properties
    if (properties && typeof properties === 'object') for (const name of Object.keys(properties)) names.add(name.toLowerCase())
    if (Array.isArray(schema.required)) for (const name of schema.required) if (typeof name === 'string') names.add(name.toLowerCase())
  }
  return [...names].filter((name) => !isDangerousKey(name))
}
