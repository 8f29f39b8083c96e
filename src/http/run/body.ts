// Step 6 of the Run API: the body (SPEC §5.1, §11, §18): 413 past `limits.bodyLimitBytes`, 415 for a
// type the Start's `accept` does not list, 400 for JSON that does not parse or nests too deep. The
// bytes an hmac Start already read are parsed, not read again.
import type { IncomingMessage } from 'node:http'
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { BodyType } from '../../model/project.js'
import { BODY_ERROR_CODES, parseBody, readRequestBody } from '../body.js'
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

export async function readRunBody(context: AppContext, event: H3Event, target: RunTarget, bytes: Uint8Array | undefined): Promise<RunBody> {
  const { project, start } = target
  const read = bytes
    ? parseBody(bytes, event.req.headers.get('content-type'), start.accept)
    : await readRequestBody(event.req, project.settings.limits.bodyLimitBytes, start.accept, nodeRequestOf(event))
  if (!read.ok) {
    if (read.status === 400) logRejected(context, project.settings.projectId, target.flow.slug, [read.error])
    throw httpError(BODY_ERROR_CODES[read.status], [read.error])
  }
  // The read result has both fields: it is what the next steps need, with no copy.
  return read
}

/** Under `serve` the body is read from the Node request; without one (`app.fetch`) from the web body. */
export function nodeRequestOf(event: H3Event): IncomingMessage | undefined {
  return event.runtime?.node?.req as IncomingMessage | undefined
}
