// The Start node (method, auth, inputs) and the schedule that feeds it.
import { checkCronExpression, isValidTimezone } from '../schedule/cron.js'
import { compileInputSchema, inputSchemaProblem } from './ajv.js'
import { HTTP_METHODS, type AuthSettings, type HttpMethod, type JsonSchema, type Schedule, type StartInfo, type StartInputs } from './model.js'
import type { NodeEntry } from './node-entries.js'
import { plainlySatisfies } from './plain-schema.js'
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
  return null
}

export function readStartInfo(entry: NodeEntry, collector: ProblemCollector): StartInfo {
  const { settings } = entry.node
  const method: HttpMethod = HTTP_METHODS.includes(settings.method as HttpMethod) ? (settings.method as HttpMethod) : 'post'
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
    if (schema.type !== undefined && schema.type !== 'object') {
      collector.error([...at, 'type'], `${entry.label}: inputs.${section} must be a schema of type object (each property is one input)`)
    }
    if (section === 'body' && method === 'get') {
      collector.error(at, `${entry.label}: a get start node cannot have body inputs; use query inputs, or another method`, { key: true })
    }
    const properties = isRecord(schema.properties) ? schema.properties : {}
    for (const name of Object.keys(properties)) {
      const first = declaredIn.get(name)
      if (first) {
        collector.error([...at, 'properties', name], `${entry.label}: input "${name}" is declared in both ${first} and ${section}; every input is start.${name}, so names must be unique`, { key: true })
      } else {
        declaredIn.set(name, section)
      }
    }
  }
  const pathProperties = isRecord(inputs.path?.properties) ? inputs.path.properties : {}
  return { node: entry.node, method, auth: readAuth(settings.auth), inputs, pathParams: Object.keys(pathProperties) }
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
