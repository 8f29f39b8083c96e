// The Start node (method, auth, inputs) and the schedule that feeds it.
import { checkCronExpression, isValidTimezone } from '../language/cron.js'
import { compileInputSchema, inputSchemaProblem } from './ajv.js'
import {
  corsFor,
  HTTP_METHODS,
  type AuthSettings,
  type BodyType,
  type CorsSettings,
  type HttpMethod,
  type JsonSchema,
  type Schedule,
  type StartInfo,
  type StartInputs,
} from '../model/project.js'
import type { NodeEntry } from './node-entries.js'
import { plainlySatisfies } from './plain-schema.js'
import { checkPattern, schemaPatterns } from './safe-pattern.js'
import { describeSchemaErrors } from './schema-messages.js'
import type { ProblemCollector } from './yaml-source.js'

const INPUT_SECTIONS = ['body', 'path', 'query', 'headers'] as const
const DEFAULT_API_KEY_HEADER = 'X-API-Key'

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** Finds the one Start node; none or several is an error. */
export function findStart(entries: NodeEntry[], collector: ProblemCollector): NodeEntry | null {
  const starts = entries.filter((e) => e.node.type === 'start')
  const [first, ...others] = starts
  if (!first) {
    collector.error(['nodes'], 'this flow has no start node; add a node with "type: start"', { key: true })
    return null
  }
  for (const other of others) {
    collector.error([...other.path, 'type'], `${other.label}: a flow has exactly one start node, and ${first.label} is already one`)
  }
  return others.length === 0 ? first : null
}

function readAuth(value: unknown): AuthSettings | null {
  if (!isRecord(value)) return null
  const text = (v: unknown) => (typeof v === 'string' ? v : '')
  if (value.type === 'bearer') return { type: 'bearer', token: text(value.token) }
  if (value.type === 'basic') return { type: 'basic', username: text(value.username), password: text(value.password) }
  if (value.type === 'apiKey') return { type: 'apiKey', key: text(value.key), header: text(value.header) || DEFAULT_API_KEY_HEADER }
  if (value.type === 'hmac') {
    return {
      type: 'hmac',
      secret: text(value.secret),
      header: text(value.header),
      algorithm: value.algorithm === 'sha1' || value.algorithm === 'sha512' ? value.algorithm : 'sha256',
      prefix: text(value.prefix),
      encoding: value.encoding === 'base64' ? 'base64' : 'hex',
    }
  }
  return null
}

const BODY_TYPES: readonly BodyType[] = ['json', 'form', 'text']

function readAccept(value: unknown): BodyType[] {
  if (!Array.isArray(value)) return ['json']
  const types = BODY_TYPES.filter((type) => value.includes(type))
  return types.length > 0 ? types : ['json']
}

/** The `cors` fields written (flowctl.yaml or a Start), without defaults; null when not an object. */
export function readCors(value: unknown): Partial<CorsSettings> | null {
  if (!isRecord(value)) return null
  const cors: Partial<CorsSettings> = {}
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((item): item is string => typeof item === 'string' && item !== '') : undefined)
  const origins = strings(value.origins)
  const headers = strings(value.headers)
  if (origins) cors.origins = origins
  if (headers) cors.headers = headers
  if (typeof value.credentials === 'boolean') cors.credentials = value.credentials
  if (typeof value.maxAgeSeconds === 'number' && Number.isInteger(value.maxAgeSeconds) && value.maxAgeSeconds >= 0) cors.maxAgeSeconds = value.maxAgeSeconds
  return cors
}

/** `"*"` with credentials would let any site act with a visitor's cookies: a load problem. */
export function corsProblem(cors: CorsSettings | null): string | null {
  if (!cors || !cors.credentials || !cors.origins.includes('*')) return null
  return 'cors: "*" (any origin) is allowed only without credentials; list the origins, or set credentials: false'
}

/** Text bodies are strings and form/JSON bodies objects: the body schema must fit what is accepted. */
function checkAccept(entry: NodeEntry, accept: BodyType[], method: HttpMethod, collector: ProblemCollector): void {
  const at = [...entry.path, 'accept']
  if (accept.includes('text') && accept.length > 1) {
    collector.error(at, `${entry.label}: accept: text cannot be combined with json or form (a text body is a string, the others are objects); make a second flow for the other type`)
  }
  if (method === 'get' && entry.node.settings.accept !== undefined) {
    collector.warning(at, `${entry.label}: accept has no effect on a get start node (GET requests have no body)`, { key: true })
  }
}

export function readStartInfo(entry: NodeEntry, collector: ProblemCollector, projectCors?: CorsSettings): StartInfo {
  const { settings } = entry.node
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
    const at = [...entry.path, 'inputs', section]
    const schemaProblem = inputSchemaProblem(schema)
    if (schemaProblem) {
      collector.error([...at, ...schemaProblem.path], `${entry.label}: inputs.${section} is not a valid JSON Schema: ${schemaProblem.message}`)
    }
    checkPatterns(entry, section, schema, collector)
    if (section === 'headers') checkHeaderNames(entry, schema, collector)
    if (section === 'body' && textBody) {
      if (schema.type !== 'string') {
        collector.error(schema.type === undefined ? at : [...at, 'type'], `${entry.label}: with accept: [text] the body is the request's text, so inputs.body must be a schema of type string`, { key: schema.type === undefined })
      }
    } else if (schema.type !== undefined && schema.type !== 'object') {
      collector.error([...at, 'type'], `${entry.label}: inputs.${section} must be a schema of type object (each property is one input)`)
    }
    if (section === 'body' && method === 'get') {
      collector.error(at, `${entry.label}: a get start node cannot have body inputs; use query inputs, or another method`, { key: true })
    }
    const properties = isRecord(schema.properties) && !(section === 'body' && textBody) ? schema.properties : {}
    for (const name of Object.keys(properties)) {
      const first = declaredIn.get(name)
      if (first) {
        collector.error([...at, 'properties', name], `${entry.label}: input "${name}" is declared in both ${first} and ${section}; every input is start.${name}, so names must be unique`, { key: true })
      } else {
        declaredIn.set(name, section)
      }
    }
  }
  // A text body is start.body, so no other input may be called body.
  const bodyClash = textBody ? declaredIn.get('body') : undefined
  if (bodyClash) {
    collector.error([...entry.path, 'inputs', bodyClash, 'properties', 'body'], `${entry.label}: a text body is start.body, so an input of ${bodyClash} cannot also be called "body"`, { key: true })
  }
  checkAccept(entry, accept, method, collector)
  const authHeader = isRecord(settings.auth) ? settings.auth.header : undefined
  if (typeof authHeader === 'string' && authHeader !== '' && !isHeaderName(authHeader)) {
    collector.error([...entry.path, 'auth', 'header'], `${entry.label}: auth.header ${JSON.stringify(authHeader)} is not a valid HTTP header name (letters, digits and !#$%&'*+.^_\`|~- only, no spaces or colons)`)
  }
  const cors = readCors(settings.cors)
  const problem = cors ? corsProblem(corsFor(projectCors, cors)) : null
  if (problem) collector.error([...entry.path, 'cors'], `${entry.label}: ${problem}`, { key: true })
  const pathProperties = isRecord(inputs.path?.properties) ? inputs.path.properties : {}
  return {
    node: entry.node,
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
}

/** Catastrophic-backtracking `pattern`s (ReDoS): a warning when RE2 runs them, else an error. */
function checkPatterns(entry: NodeEntry, section: string, schema: JsonSchema, collector: ProblemCollector): void {
  for (const { path, pattern } of schemaPatterns(schema)) {
    const verdict = checkPattern(pattern)
    if (verdict.ok) continue
    const at = [...entry.path, 'inputs', section, ...path.map(String)]
    const text = `${entry.label}: inputs.${section}: ${verdict.message}`
    // A patternProperties key is reported at the key itself.
    const key = path.at(-2) === 'patternProperties'
    if (verdict.severity === 'error') collector.error(at, text, { key })
    else collector.warning(at, text, { key })
  }
}

/** An HTTP header name (RFC 9110 token); anything else makes every request fail inside fetch/Headers. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

export function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name)
}

function checkHeaderNames(entry: NodeEntry, schema: JsonSchema, collector: ProblemCollector): void {
  const properties = isRecord(schema.properties) ? Object.keys(schema.properties) : []
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []
  for (const name of new Set([...properties, ...required])) {
    if (isHeaderName(name)) continue
    const at = properties.includes(name) ? [...entry.path, 'inputs', 'headers', 'properties', name] : [...entry.path, 'inputs', 'headers', 'required']
    collector.error(at, `${entry.label}: inputs.headers: ${JSON.stringify(name)} is not a valid HTTP header name (letters, digits and !#$%&'*+.^_\`|~- only, no spaces or colons)`, { key: properties.includes(name) })
  }
}

/** A scheduled flow that anyone can also call over HTTP is usually a mistake (SPEC §11). */
export function warnOpenScheduledFlow(entry: NodeEntry, start: StartInfo, collector: ProblemCollector): void {
  if (!start.http || start.auth) return
  collector.warning(
    ['schedule'],
    `this flow runs on a schedule and anyone can also call it over HTTP (${entry.label} has no auth); add "http: false" to the start node to make it schedule-only, or give it auth`,
    { key: true },
  )
}

/** The schedule with defaults; its cron, timezone and input (against the Start's body schema) checked. */
export function readSchedule(
  value: unknown,
  start: StartInfo | null,
  projectTimezone: string,
  collector: ProblemCollector,
): Schedule | null {
  if (!isRecord(value) || typeof value.cron !== 'string') return null
  const cronProblem = checkCronExpression(value.cron)
  if (cronProblem) collector.error(['schedule', 'cron'], `schedule ${cronProblem}`)
  let timezone = projectTimezone
  if (typeof value.timezone === 'string') {
    if (isValidTimezone(value.timezone)) timezone = value.timezone
    else collector.error(['schedule', 'timezone'], `schedule timezone "${value.timezone}" is not a known timezone; use an IANA name like Europe/Berlin or UTC`)
  }
  const input = isRecord(value.input) ? value.input : {}
  const body: JsonSchema | undefined = start?.inputs.body
  if (body) checkScheduleInput(input, body, collector)
  // Shapes (enum, 1-1440) are checked by the flow file schema; here only the defaults.
  const catchUp = value.catchUp === 'latest' || value.catchUp === 'all' ? value.catchUp : 'none'
  const catchUpMinutes = typeof value.catchUpMinutes === 'number' && Number.isInteger(value.catchUpMinutes) ? Math.min(Math.max(value.catchUpMinutes, 1), 1440) : 60
  return { cron: value.cron, enabled: value.enabled !== false, timezone, input, catchUp, catchUpMinutes }
}

function checkScheduleInput(input: Record<string, unknown>, body: JsonSchema, collector: ProblemCollector): void {
  if (plainlySatisfies(body, structuredClone(input))) return // no need to load and run ajv
  let validate
  try {
    validate = compileInputSchema(body)
  } catch {
    return // the body schema itself is reported on the start node
  }
  // Validate a copy: defaults are applied by the engine at run time, not written into the model.
  const copy = structuredClone(input)
  if (validate(copy)) return
  const written = collector.source?.data as { schedule?: { input?: unknown } } | null
  const at = written?.schedule?.input === undefined ? ['schedule'] : ['schedule', 'input']
  for (const issue of describeSchemaErrors(validate.errors ?? [], copy, { rootName: 'schedule.input', prefix: ['schedule', 'input'] })) {
    const path = at.length === 1 ? at : [...at, ...issue.path]
    collector.error(path, `${issue.message} (the schedule input is the body of scheduled runs)`, { key: issue.key && at.length > 1 })
  }
}
