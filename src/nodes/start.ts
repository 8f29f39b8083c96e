// The Start node: its settings, the checks on them (input schemas, auth header, body types, CORS),
// and `entry.read`, which turns them into the flow's StartInfo (what the Run API and OpenAPI use).
import { corsProblem, readCors } from '../model/cors.js'
import {
  corsFor,
  HTTP_METHODS,
  HMAC_SCHEMES,
  type AuthSettings,
  type BodyType,
  type HmacScheme,
  type FlowNode,
  type HttpMethod,
  type JsonSchema,
  type StartInfo,
  type StartInputs,
} from '../model/project.js'
import { CORS_SCHEMA } from '../model/shapes.js'
import type { NodeKind, NodeRequestDoc, SettingsCheckContext, SettingsProblem } from './types.js'
import { isRecord } from '../internal/is-record.js'

/** How far a Stripe or Slack signature's timestamp may be from now (their libraries' default too). */
const DEFAULT_TOLERANCE_SECONDS = 300
const SCHEME_HEADERS: Record<HmacScheme, string> = { stripe: 'Stripe-Signature', slack: 'X-Slack-Signature' }

const inputSchema = { type: 'object', description: 'A JSON Schema of type object; each property is one input.' }

/** Makes a flow callable over HTTP. Its output is the validated inputs, prepared by the engine. */
export const startNode: NodeKind = {
  type: 'start',
  description: 'Entry point: HTTP method, body types, authentication, CORS, JSON-Schema inputs, idempotency keys and a concurrency limit.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      description: { type: 'string' },
      method: { enum: ['get', 'post', 'put', 'patch', 'delete'], default: 'post' },
      auth: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'token'],
            properties: { type: { const: 'bearer' }, token: { type: 'string' } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'username', 'password'],
            properties: { type: { const: 'basic' }, username: { type: 'string' }, password: { type: 'string' } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'key'],
            properties: { type: { const: 'apiKey' }, key: { type: 'string' }, header: { type: 'string' } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'secret'],
            description:
              "A signed webhook: an HMAC of the raw body bytes (GitHub: header X-Hub-Signature-256, prefix sha256=), or with scheme: stripe | slack the sender's timestamped signature, each accepted once.",
            properties: {
              type: { const: 'hmac' },
              secret: { type: 'string' },
              header: { type: 'string', minLength: 1, description: 'The header carrying the signature (required without scheme).' },
              algorithm: { enum: ['sha256', 'sha1', 'sha512'], default: 'sha256' },
              prefix: { type: 'string', default: '', description: 'Text before the signature in the header, like sha256=.' },
              encoding: { enum: ['hex', 'base64'], default: 'hex' },
              scheme: {
                enum: [...HMAC_SCHEMES],
                description:
                  'stripe: Stripe-Signature (t=<unix>,v1=<hex>, signed text <t>.<body>); slack: X-Slack-Signature (v0=<hex>) with X-Slack-Request-Timestamp (signed text v0:<t>:<body>). Header, algorithm, prefix and encoding are then fixed.',
              },
              toleranceSeconds: {
                type: 'integer',
                minimum: 1,
                maximum: 86_400,
                default: DEFAULT_TOLERANCE_SECONDS,
                description: "With scheme: how far the signature's timestamp may be from now, either way; a signature is accepted once within it.",
              },
            },
          },
        ],
      },
      accept: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { enum: ['json', 'form', 'text'] },
        default: ['json'],
        description: 'Body types taken: json, form (application/x-www-form-urlencoded), text (text/plain). Others get 415.',
      },
      http: { type: 'boolean', default: true, description: 'false: no HTTP route; the flow runs only on its schedule or with flowctl run.' },
      respond: {
        enum: ['sync', 'async'],
        default: 'sync',
        description:
          'async: the Run API answers 202 with a runId once the run is queued, and runs it in the background (result at /api/result/<projectId>/<runId>).',
      },
      cors: CORS_SCHEMA,
      summary: { type: 'string', minLength: 1, description: "The operation's summary in the OpenAPI document (default: the node's name)." },
      operationId: {
        type: 'string',
        pattern: '^[A-Za-z0-9._-]+$',
        description:
          "The operation's operationId in the OpenAPI document (default: <startNodeId>_<method>; when several operations share an id, each gets _<slug> appended).",
      },
      inputs: {
        type: 'object',
        additionalProperties: false,
        properties: { path: inputSchema, query: inputSchema, headers: inputSchema, body: inputSchema },
      },
      idempotency: {
        type: 'object',
        additionalProperties: false,
        description:
          'A repeated key answers the stored response (Idempotent-Replayed: true) and runs nothing; 409 while the first runs, 422 with a different request.',
        properties: {
          header: {
            type: 'string',
            minLength: 1,
            pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$",
            default: 'Idempotency-Key',
            description: 'The request header carrying the key.',
          },
          ttlSeconds: {
            type: 'integer',
            minimum: 1,
            maximum: 2_592_000,
            default: 86_400,
            description: 'How long a key and its answer are kept (at most 30 days).',
          },
        },
      },
      concurrency: {
        type: 'object',
        additionalProperties: false,
        required: ['limit'],
        description: 'At most limit runs of this flow at once, across every instance on the store; scheduled runs over it are recorded as skipped.',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 1000 },
          onLimit: {
            enum: ['reject', 'queue'],
            default: 'reject',
            description: 'reject: 429 "flow busy"; queue: wait for a free slot, at most the run timeout.',
          },
        },
      },
    },
  },
  ports: () => ['out'],
  noCommonSettings: true,
  literalSettings: ['inputs'],
  entry: { read: readStartInfo },
  openapi: { request: documentedRequest },
  async execute(context) {
    return { output: context.inputs ?? {} }
  },
}

const INPUT_SECTIONS = ['body', 'path', 'query', 'headers'] as const
const DEFAULT_API_KEY_HEADER = 'X-API-Key'
const BODY_TYPES: readonly BodyType[] = ['json', 'form', 'text']

function readAuth(value: unknown): AuthSettings | null {
  if (!isRecord(value)) return null
  const text = (v: unknown) => (typeof v === 'string' ? v : '')
  if (value.type === 'bearer') return { type: 'bearer', token: text(value.token) }
  if (value.type === 'basic') return { type: 'basic', username: text(value.username), password: text(value.password) }
  if (value.type === 'apiKey') return { type: 'apiKey', key: text(value.key), header: text(value.header) || DEFAULT_API_KEY_HEADER }
  if (value.type === 'hmac') {
    const scheme = HMAC_SCHEMES.find((name) => name === value.scheme) ?? null
    const tolerance = value.toleranceSeconds
    const toleranceSeconds = typeof tolerance === 'number' && Number.isInteger(tolerance) && tolerance >= 1 ? tolerance : DEFAULT_TOLERANCE_SECONDS
    // A scheme fixes the sender's header and format (the settings check rejects them written beside it).
    if (scheme)
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
  return null
}

/** Settings that a scheme fixes, or that only a scheme uses: each written in the wrong place is a problem. */
function hmacSchemeProblems(auth: Record<string, unknown>): SettingsProblem[] {
  if (auth.type !== 'hmac') return []
  const problems: SettingsProblem[] = []
  const scheme = typeof auth.scheme === 'string' ? auth.scheme : null
  if (scheme) {
    for (const name of ['header', 'algorithm', 'prefix', 'encoding']) {
      if (auth[name] !== undefined) {
        problems.push({
          path: ['auth', name],
          message: `auth.${name} cannot be set with scheme: ${scheme} (the sender's header and format are fixed)`,
          key: true,
        })
      }
    }
  } else {
    if (auth.header === undefined)
      problems.push({ path: ['auth'], message: 'an hmac auth needs header (the header carrying the signature), or a scheme: stripe | slack', key: true })
    if (auth.toleranceSeconds !== undefined) {
      problems.push({
        path: ['auth', 'toleranceSeconds'],
        message: 'auth.toleranceSeconds needs a scheme (stripe or slack): a plain hmac signature has no timestamp',
        key: true,
      })
    }
  }
  return problems
}

function readAccept(value: unknown): BodyType[] {
  if (!Array.isArray(value)) return ['json']
  const types = BODY_TYPES.filter((type) => value.includes(type))
  return types.length > 0 ? types : ['json']
}

/** An HTTP header name (RFC 9110 token); anything else makes every request fail inside fetch/Headers. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

export function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name)
}

const HEADER_NAME_RULE = "letters, digits and !#$%&'*+.^_`|~- only, no spaces or colons"

/**
 * The Start's settings as the flow's StartInfo, with every problem they have. Reads defensively (it
 * runs even when the settings schema found problems), so one mistake gives one message.
 */
function readStartInfo(node: FlowNode, context: SettingsCheckContext): { start: StartInfo; problems: SettingsProblem[] } {
  const { settings } = node
  const problems: SettingsProblem[] = []
  const error = (path: (string | number)[], message: string, key = false) => problems.push({ path, message, ...(key ? { key } : {}) })
  const method: HttpMethod = HTTP_METHODS.includes(settings.method as HttpMethod) ? (settings.method as HttpMethod) : 'post'
  const accept = readAccept(settings.accept)
  const textBody = accept.length === 1 && accept[0] === 'text'
  const written = isRecord(settings.inputs) ? settings.inputs : {}
  const inputs: StartInputs = {}
  const declaredIn = new Map<string, string>()
  for (const section of INPUT_SECTIONS) {
    const schema = written[section]
    if (!isRecord(schema)) continue
    inputs[section] = schema
    const at = ['inputs', section]
    const schemaProblem = context.schemaProblem(schema)
    if (schemaProblem) error([...at, ...schemaProblem.path], `inputs.${section} is not a valid JSON Schema: ${schemaProblem.message}`)
    // Catastrophic-backtracking `pattern`s (ReDoS): a warning when RE2 runs them, else an error.
    for (const pattern of context.patternProblems(schema)) {
      // A patternProperties key is reported at the key itself.
      const key = pattern.path.at(-2) === 'patternProperties'
      problems.push({
        path: [...at, ...pattern.path],
        message: `inputs.${section}: ${pattern.message}`,
        ...(key ? { key } : {}),
        ...(pattern.severity === 'warning' ? { severity: 'warning' as const } : {}),
      })
    }
    if (section === 'headers') problems.push(...headerNameProblems(schema))
    if (section === 'body' && textBody) {
      if (schema.type !== 'string') {
        error(
          schema.type === undefined ? at : [...at, 'type'],
          "with accept: [text] the body is the request's text, so inputs.body must be a schema of type string",
          schema.type === undefined,
        )
      }
    } else if (schema.type !== undefined && schema.type !== 'object') {
      error([...at, 'type'], `inputs.${section} must be a schema of type object (each property is one input)`)
    }
    if (section === 'body' && method === 'get') error(at, 'a get start node cannot have body inputs; use query inputs, or another method', true)
    const properties = isRecord(schema.properties) && !(section === 'body' && textBody) ? schema.properties : {}
    for (const name of Object.keys(properties)) {
      const first = declaredIn.get(name)
      if (first)
        error(
          [...at, 'properties', name],
          `input "${name}" is declared in both ${first} and ${section}; every input is start.${name}, so names must be unique`,
          true,
        )
      else declaredIn.set(name, section)
    }
  }
  // A text body is start.body, so no other input may be called body.
  const bodyClash = textBody ? declaredIn.get('body') : undefined
  if (bodyClash) error(['inputs', bodyClash, 'properties', 'body'], `a text body is start.body, so an input of ${bodyClash} cannot also be called "body"`, true)
  // Text bodies are strings and form/JSON bodies objects: the body schema must fit what is accepted.
  if (accept.includes('text') && accept.length > 1) {
    error(
      ['accept'],
      'accept: text cannot be combined with json or form (a text body is a string, the others are objects); make a second flow for the other type',
    )
  }
  if (method === 'get' && settings.accept !== undefined) {
    problems.push({ path: ['accept'], message: 'accept has no effect on a get start node (GET requests have no body)', key: true, severity: 'warning' })
  }
  if (isRecord(settings.auth)) problems.push(...hmacSchemeProblems(settings.auth))
  const authHeader = isRecord(settings.auth) ? settings.auth.header : undefined
  if (typeof authHeader === 'string' && authHeader !== '' && !isHeaderName(authHeader)) {
    error(['auth', 'header'], `auth.header ${JSON.stringify(authHeader)} is not a valid HTTP header name (${HEADER_NAME_RULE})`)
  }
  const cors = readCors(settings.cors)
  const problem = cors ? corsProblem(corsFor(context.projectCors, cors)) : null
  if (problem) error(['cors'], problem, true)
  const pathProperties = isRecord(inputs.path?.properties) ? inputs.path.properties : {}
  const start: StartInfo = {
    node,
    method,
    auth: readAuth(settings.auth),
    inputs,
    pathParams: Object.keys(pathProperties),
    accept,
    http: settings.http !== false,
    ...(settings.respond === 'async' ? { respond: 'async' as const } : {}),
    cors,
    ...(typeof settings.summary === 'string' && settings.summary !== '' ? { summary: settings.summary } : {}),
    ...(typeof settings.operationId === 'string' && settings.operationId !== '' ? { operationId: settings.operationId } : {}),
  }
  return { start, problems }
}

function headerNameProblems(schema: JsonSchema): SettingsProblem[] {
  const properties = isRecord(schema.properties) ? Object.keys(schema.properties) : []
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []
  const problems: SettingsProblem[] = []
  for (const name of new Set([...properties, ...required])) {
    if (isHeaderName(name)) continue
    const declared = properties.includes(name)
    const path = declared ? ['inputs', 'headers', 'properties', name] : ['inputs', 'headers', 'required']
    problems.push({
      path,
      message: `inputs.headers: ${JSON.stringify(name)} is not a valid HTTP header name (${HEADER_NAME_RULE})`,
      ...(declared ? { key: true } : {}),
    })
  }
  return problems
}

/** The operation's parameters (path, query and header inputs) and body (one media type per accepted body type). */
function documentedRequest(start: StartInfo): NodeRequestDoc {
  const { path, query, headers, body } = start.inputs
  const pathProperties = propertiesOf(path)
  const parameters: NodeRequestDoc['parameters'] = [
    ...start.pathParams.map((name) => ({ name, in: 'path' as const, required: true, schema: pathProperties[name] })),
    ...objectParameters(query, 'query'),
    ...objectParameters(headers, 'header'),
  ]
  if (start.method === 'get') return { parameters, body: null }
  // A text body is one string (SPEC §11).
  if (start.accept.includes('text')) return { parameters, body: { required: body !== undefined, content: { 'text/plain': body ?? { type: 'string' } } } }
  if (!body) return { parameters, body: null }
  const content: Record<string, JsonSchema> = {}
  if (start.accept.includes('json')) content['application/json'] = body
  if (start.accept.includes('form')) content['application/x-www-form-urlencoded'] = body
  return { parameters, body: { required: true, content } }
}

function objectParameters(schema: JsonSchema | undefined, location: 'query' | 'header'): NodeRequestDoc['parameters'] {
  const required = new Set(Array.isArray(schema?.required) ? schema.required : [])
  return Object.entries(propertiesOf(schema)).map(([name, property]) => ({ name, in: location, required: required.has(name), schema: property }))
}

function propertiesOf(schema: JsonSchema | undefined): Record<string, unknown> {
  return isRecord(schema?.properties) ? schema.properties : {}
}
