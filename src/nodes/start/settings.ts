// A Start's settings as one typed value (StartSettings), every default applied here: the method, the
// credential (its header), the body types, respond, CORS, idempotency and concurrency. Parsed once
// when the project loads; the Run API, the scheduler and the OpenAPI generator read only this.
import { isRecord } from '../../internal/is-record.js'
import { readCors } from '../../model/cors.js'
import {
  HTTP_METHODS,
  HMAC_SCHEMES,
  type AuthSettings,
  type BodyType,
  type ConcurrencySettings,
  type HmacScheme,
  type HttpMethod,
  type IdempotencySettings,
  type StartInputs,
  type StartSettings,
} from '../../model/project.js'

/** The header an `apiKey` credential comes in when the Start names none. */
export const DEFAULT_API_KEY_HEADER = 'X-API-Key'
export const DEFAULT_IDEMPOTENCY_HEADER = 'Idempotency-Key'
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 86_400
/** How far a Stripe or Slack signature's timestamp may be from now (their libraries' default too). */
export const DEFAULT_TOLERANCE_SECONDS = 300
const SCHEME_HEADERS: Record<HmacScheme, string> = { stripe: 'Stripe-Signature', slack: 'X-Slack-Signature' }

export const INPUT_SECTIONS = ['body', 'path', 'query', 'headers'] as const
const BODY_TYPES: readonly BodyType[] = ['json', 'form', 'text']

const text = (value: unknown) => (typeof value === 'string' ? value : '')

/** The Start's settings with their defaults. Reads defensively: it also runs on settings the schema refused. */
export function parseStartSettings(settings: Record<string, unknown>): StartSettings {
  const method: HttpMethod = HTTP_METHODS.includes(settings.method as HttpMethod) ? (settings.method as HttpMethod) : 'post'
  const inputs = readInputs(settings.inputs)
  const pathProperties = isRecord(inputs.path?.properties) ? inputs.path.properties : {}
  return {
    method,
    auth: readAuth(settings.auth),
    inputs,
    pathParams: Object.keys(pathProperties),
    accept: readAccept(settings.accept),
    http: settings.http !== false,
    respond: settings.respond === 'async' ? 'async' : 'sync',
    cors: readCors(settings.cors),
    idempotency: readIdempotency(settings.idempotency),
    concurrency: readConcurrency(settings.concurrency),
    ...(typeof settings.summary === 'string' && settings.summary !== '' ? { summary: settings.summary } : {}),
    ...(typeof settings.operationId === 'string' && settings.operationId !== '' ? { operationId: settings.operationId } : {}),
  }
}

function readInputs(value: unknown): StartInputs {
  const written = isRecord(value) ? value : {}
  const inputs: StartInputs = {}
  for (const section of INPUT_SECTIONS) {
    const schema = written[section]
    if (isRecord(schema)) inputs[section] = schema
  }
  return inputs
}

function readAccept(value: unknown): BodyType[] {
  if (!Array.isArray(value)) return ['json']
  const types = BODY_TYPES.filter((type) => value.includes(type))
  return types.length > 0 ? types : ['json']
}

function readAuth(value: unknown): AuthSettings | null {
  if (!isRecord(value)) return null
  if (value.type === 'bearer') return { type: 'bearer', token: text(value.token) }
  if (value.type === 'basic') return { type: 'basic', username: text(value.username), password: text(value.password) }
  if (value.type === 'apiKey') return { type: 'apiKey', key: text(value.key), header: text(value.header) || DEFAULT_API_KEY_HEADER }
  if (value.type === 'hmac') return readHmac(value)
  return null
}

function readHmac(value: Record<string, unknown>): AuthSettings {
  const scheme = HMAC_SCHEMES.find((name) => name === value.scheme) ?? null
  const tolerance = value.toleranceSeconds
  const toleranceSeconds = typeof tolerance === 'number' && Number.isInteger(tolerance) && tolerance >= 1 ? tolerance : DEFAULT_TOLERANCE_SECONDS
  // A scheme fixes the sender's header and format (the settings check rejects them written beside it).
  if (scheme) {
    return {
      type: 'hmac',
      secret: text(value.secret),
      header: SCHEME_HEADERS[scheme],
      algorithm: 'sha256',
      prefix: '',
      encoding: 'hex',
      scheme,
      toleranceSeconds,
    }
  }
  return {
    type: 'hmac',
    secret: text(value.secret),
    header: text(value.header),
    algorithm: value.algorithm === 'sha1' || value.algorithm === 'sha512' ? value.algorithm : 'sha256',
    prefix: text(value.prefix),
    encoding: value.encoding === 'base64' ? 'base64' : 'hex',
    scheme: null,
    toleranceSeconds,
  }
}

function readIdempotency(value: unknown): IdempotencySettings | null {
  if (!isRecord(value)) return null
  const header = typeof value.header === 'string' && value.header !== '' ? value.header : DEFAULT_IDEMPOTENCY_HEADER
  const ttl = typeof value.ttlSeconds === 'number' && value.ttlSeconds >= 1 ? Math.floor(value.ttlSeconds) : DEFAULT_IDEMPOTENCY_TTL_SECONDS
  return { header, headerKey: header.toLowerCase(), ttlSeconds: ttl }
}

function readConcurrency(value: unknown): ConcurrencySettings | null {
  if (!isRecord(value) || typeof value.limit !== 'number' || !Number.isInteger(value.limit) || value.limit < 1) return null
  return { limit: value.limit, onLimit: value.onLimit === 'queue' ? 'queue' : 'reject' }
}
