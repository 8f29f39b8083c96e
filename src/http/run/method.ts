// Step 3 of the Run API: only the Start's method, 405 with `Allow` otherwise. HEAD on a GET flow
// runs it as GET and drops the body (run/answer.ts `withoutBody`).
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { StartInfo } from '../../model/project.js'

/** The request's method in upper case, when the Start takes it. */
export function checkMethod(event: H3Event, start: StartInfo): string {
  const method = event.req.method.toUpperCase()
  const isHead = method === 'HEAD' && start.method === 'get'
  if (!isHead && method !== start.method.toUpperCase()) {
    throw httpError('METHOD_NOT_ALLOWED', undefined, { headers: { allow: `${allowedMethods(start)}, OPTIONS` } })
  }
  return method
}

/** Whether the request's body is read: any method but GET and HEAD, or a Start that declares a body. */
export function readsBody(start: StartInfo, method: string): boolean {
  return start.inputs.body !== undefined || (method !== 'GET' && method !== 'HEAD')
}

/** `Allow` of a flow's route: its method (GET also answers HEAD). */
export function allowedMethods(start: StartInfo): string {
  return start.method === 'get' ? 'GET, HEAD' : start.method.toUpperCase()
}
