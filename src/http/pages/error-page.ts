// The one error page: any catalog error (src/errors.ts) a page route throws becomes a page with the
// error's status and headers (`WWW-Authenticate` of a 401), a title from its code, as text the
// error's public `errors` (never its message) or, when it has only the catalog's default line, what
// a person can do about it, and the status with the catalog's line. Page routes throw the same errors as the JSON APIs (`pageRoute`); a
// request that asked for JSON (the run form's script) gets the JSON answer of app.ts's onError.
import type { H3Event } from 'h3'
import { ERROR_CATALOG, isFlowctlError, type ErrorCode, type FlowctlError } from '../../errors.js'
import { html } from '../html.js'
import { pageResponse } from './layout.js'

const TITLES: Partial<Record<ErrorCode, string>> = {
  AUTH_REQUIRED: 'Sign-in needed',
  FORBIDDEN: 'Not allowed',
  NOT_FOUND: 'Not found',
  PROJECT_NOT_FOUND: 'Not found',
  FLOW_NOT_FOUND: 'Not found',
  RUN_NOT_FOUND: 'Not found',
  STORE_UNAVAILABLE: 'Store unavailable',
}

/** What a person can do, for errors thrown with the catalog's line only. */
const EXPLANATIONS: Partial<Record<ErrorCode, string>> = {
  AUTH_REQUIRED: 'Sign in at /sign-in with a user token (from "flowctl users add"), or open this page on the server\'s own machine.',
  FORBIDDEN: 'Your user has no role on this project that allows this.',
  PROJECT_NOT_FOUND: 'This server has no such project.',
  STORE_UNAVAILABLE: 'The run history of this project cannot be read right now.',
}

/** `title`: where the code's own title would mislead (a resume link is no sign-in). */
export function errorPage(error: FlowctlError, title?: string): Response {
  const catalogLine = ERROR_CATALOG[error.code].message
  // The explanations are the pages' (sign in, roles); a page with its own title has its own context.
  const explanation = title === undefined ? EXPLANATIONS[error.code] : undefined
  title ??= TITLES[error.code] ?? catalogLine[0]!.toUpperCase() + catalogLine.slice(1)
  const onlyCatalogLine = error.errors.length === 1 && error.errors[0] === catalogLine
  const text = onlyCatalogLine ? (explanation ?? catalogLine) : error.errors.join('; ')
  // The status and the catalog's line under the text, the same words as the JSON answer's.
  const body = html`<h1>${title}</h1><section><p>${text}</p><p class="muted">${error.httpStatus} ${catalogLine}</p></section>`
  const response = pageResponse(error.httpStatus, { title, body })
  for (const [name, value] of Object.entries(error.headers ?? {})) response.headers.set(name, value)
  return response
}

/** A page route: a catalog error it throws is answered with the error page (JSON when JSON was asked for). */
export function pageRoute(handler: (event: H3Event) => Promise<Response>): (event: H3Event) => Promise<Response> {
  return async (event) => {
    try {
      return await handler(event)
    } catch (error) {
      if (!isFlowctlError(error) || wantsJson(event)) throw error
      return errorPage(error)
    }
  }
}

/** The run form's script asks for JSON answers. */
export function wantsJson(event: H3Event): boolean {
  return (event.req.headers.get('accept') ?? '').includes('application/json')
}
