// CORS for the Run API (SPEC §11): the project's `cors` with the Start's fields over it. Answers to
// an allowed origin carry Access-Control-Allow-Origin; a listed origin is echoed, `*` is sent only
// when `*` is configured (never with credentials: that is a load problem). Every answer of a flow
// with CORS settings carries `Vary: Origin`, so caches keep answers for different origins apart.
// SPEC §20: a preflight allows the Start's idempotency header and declared header inputs, and every
// allowed answer lists in Access-Control-Expose-Headers what a page may want to read (X-Run-Id, the
// async Location, Idempotent-Replayed, Retry-After, and every header an End of the flow sets).
import { startCors, type Flow, type Project, type StartInfo } from '../model/project.js'
import { getNodeKind } from '../nodes/registry.js'
import type { HeaderPairs } from './respond.js'

export interface FlowCors {
  /** Lower-cased allowed origins; `*` for any. */
  origins: Set<string>
  any: boolean
  credentials: boolean
  maxAgeSeconds: number
  /** Access-Control-Allow-Headers of a preflight. */
  allowHeaders: string
  /** Access-Control-Expose-Headers of an allowed answer. */
  exposeHeaders: string
}

/** Headers of the Run API's own answers that a page may read. */
const RUN_API_EXPOSED = ['X-Run-Id', 'Location', 'Idempotent-Replayed', 'Retry-After']
/** Safelisted response headers need no listing; the rest are the transport's. */
const NOT_EXPOSED = new Set(['content-type', 'content-length', 'cache-control', 'content-language', 'expires', 'last-modified', 'pragma', 'set-cookie'])

/**
 * The resolved CORS settings of a Start (the project's with the Start's over them); null when none
 * apply. With its flow, the headers its Ends set are exposed too.
 */
export function flowCors(project: Project, start: StartInfo, flow?: Flow): FlowCors | null {
  const settings = startCors(project, start)
  if (!settings) return null
  const origins = new Set(settings.origins.map((origin) => origin.replace(/\/+$/, '').toLowerCase()))
  return {
    origins,
    any: origins.has('*'),
    credentials: settings.credentials,
    maxAgeSeconds: settings.maxAgeSeconds,
    allowHeaders: allowedRequestHeaders(start, settings.headers).join(', '),
    exposeHeaders: exposedHeaders(flow).join(', '),
  }
}

/** The Run API's readable headers and every header an End (a terminating node) of the flow sets. */
function exposedHeaders(flow: Flow | undefined): string[] {
  const names = new Map(RUN_API_EXPOSED.map((name) => [name.toLowerCase(), name]))
  for (const node of flow?.nodes ?? []) {
    const kind = getNodeKind(node.type)
    const answer = kind?.terminates ? kind.openapi?.response?.(node.parsed) : undefined
    for (const name of answer?.headers ?? []) {
      const lower = name.toLowerCase()
      if (!names.has(lower) && !NOT_EXPOSED.has(lower)) names.set(lower, name)
    }
  }
  return [...names.values()]
}

/** Content-Type, the credential's header, the declared header inputs and the configured extras. */
function allowedRequestHeaders(start: StartInfo, extra: string[]): string[] {
  const names = new Map<string, string>()
  const add = (name: string) => {
    if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name)
  }
  add('Content-Type')
  if (start.idempotency) add(start.idempotency.header)
  const auth = start.auth
  if (auth?.type === 'bearer' || auth?.type === 'basic') add('Authorization')
  else if (auth?.type === 'apiKey' || auth?.type === 'hmac') add(auth.header)
  const properties = start.inputs.headers?.properties
  if (properties && typeof properties === 'object') for (const name of Object.keys(properties)) add(name)
  for (const name of extra) add(name)
  return [...names.values()]
}

/** The CORS headers of an answer to `origin` (none when it is not allowed), plus Vary: Origin. */
export function corsHeaders(cors: FlowCors, origin: string | null): HeaderPairs {
  const headers: HeaderPairs = { vary: 'Origin' }
  const allowed = originAllowed(cors, origin)
  if (!allowed) return headers
  headers['access-control-allow-origin'] = allowed
  if (cors.credentials) headers['access-control-allow-credentials'] = 'true'
  if (cors.exposeHeaders) headers['access-control-expose-headers'] = cors.exposeHeaders
  return headers
}

/** `*` or the origin itself when it may call; null otherwise. */
function originAllowed(cors: FlowCors, origin: string | null): string | null {
  if (!origin) return null
  if (cors.any) return '*'
  return cors.origins.has(origin.toLowerCase()) ? origin : null
}

/** A preflight's answer headers; null when the origin is not allowed (the plain OPTIONS answer then). */
export function preflightHeaders(cors: FlowCors, origin: string | null, allowMethods: string): HeaderPairs | null {
  const headers = corsHeaders(cors, origin)
  if (!headers['access-control-allow-origin']) return null
  headers['access-control-allow-methods'] = allowMethods
  headers['access-control-allow-headers'] = cors.allowHeaders
  headers['access-control-max-age'] = String(cors.maxAgeSeconds)
  // Expose-Headers belongs to actual answers, not to the preflight.
  delete headers['access-control-expose-headers']
  return headers
}
