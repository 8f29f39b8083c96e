// Step 6 of the Run API: the body (SPEC §5.1, §11, §18): 413 past `limits.bodyLimitBytes`, 415 for a
// type the Start's `accept` does not list, 400 for JSON that does not parse or nests too deep. The
// bytes an hmac Start already read are parsed, not read again.
import type { IncomingMessage } from 'node:http'
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { BodyType } from '../../model/project.js'
import { BODY_ERROR_CODES, parseBody, readRequestBody, type RequestBody } from '../body.js'
import type { AppContext } from '../context.js'
import { logRejected } from '../run-log.js'
import type { RunTarget } from './resolve.js'

export interface RunBody {
  body: unknown
  /** How it arrived (`json`, `form`, `text`); null when not read. */
  type: BodyType | null
}

/** A request whose body is not read (a GET without a declared body). */
export const NO_BODY: RunBody = { body: undefined, type: null }

/** The body as read: the bytes an hmac Start already read are parsed, not read again. */
export function readBody(event: H3Event, target: RunTarget, bytes: Uint8Array | undefined): RequestBody | Promise<RequestBody> {
  const { project, start } = target
  if (bytes) return parseBody(bytes, event.req.headers.get('content-type'), start.accept)
  return readRequestBody(event.req, project.settings.limits.bodyLimitBytes, start.accept, nodeRequestOf(event))
}

/** The read body, or its refusal thrown (a 400 is logged, SPEC §14). */
export function acceptBody(context: AppContext, target: RunTarget, read: RequestBody): RunBody {
  if (read.ok) return read
  if (read.status === 400) logRejected(context, target.project.settings.projectId, target.flow.slug, [read.error])
  throw httpError(BODY_ERROR_CODES[read.status], [read.error])
}

/** Under `serve` the body is read from the Node request; without one (`app.fetch`) from the web body. */
export function nodeRequestOf(event: H3Event): IncomingMessage | undefined {
  return event.runtime?.node?.req as IncomingMessage | undefined
}
