// What a Start's settings must keep beyond their schema: valid input schemas (and no ReDoS patterns),
// body schemas that fit the accepted body types, unique input names, header names, the hmac fields a
// scheme fixes, and CORS that does not allow `*` with credentials.
import { corsProblem } from '../../model/cors.js'
import { corsFor, type JsonSchema, type StartSettings } from '../../model/project.js'
import type { SettingsCheckContext, SettingsProblem } from '../types.js'
import { isRecord } from '../../internal/is-record.js'
import { INPUT_SECTIONS } from './settings.js'

/** An HTTP header name (RFC 9110 token); anything else makes every request fail inside fetch/Headers. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name)
}

const HEADER_NAME_RULE = "letters, digits and !#$%&'*+.^_`|~- only, no spaces or colons"

/**
 * Every problem of a Start's settings. Reads defensively (it runs even when the settings schema found
 * problems), so one mistake gives one message.
 */
export function startProblems(settings: Record<string, unknown>, context: SettingsCheckContext, parsed: StartSettings): SettingsProblem[] {
  const { method, accept, inputs, cors } = parsed
  const problems: SettingsProblem[] = []
  const error = (path: (string | number)[], message: string, key = false) => problems.push({ path, message, ...(key ? { key } : {}) })
  const textBody = accept.length === 1 && accept[0] === 'text'
  const declaredIn = new Map<string, string>()
  for (const section of INPUT_SECTIONS) {
    const schema = inputs[section]
    if (!schema) continue
    const at = ['inputs', section]
    problems.push(...schemaProblems(schema, section, context))
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
  problems.push(...authProblems(settings.auth))
  const problem = cors ? corsProblem(corsFor(context.projectCors, cors)) : null
  if (problem) error(['cors'], problem, true)
  return problems
}

/** An input schema against the meta-schema, and its catastrophic-backtracking `pattern`s (ReDoS). */
function schemaProblems(schema: JsonSchema, section: string, context: SettingsCheckContext): SettingsProblem[] {
  const at = ['inputs', section]
  const problems: SettingsProblem[] = []
  const schemaProblem = context.schemaProblem(schema)
  if (schemaProblem) problems.push({ path: [...at, ...schemaProblem.path], message: `inputs.${section} is not a valid JSON Schema: ${schemaProblem.message}` })
  // A warning when RE2 runs them, else an error.
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
  return problems
}

function authProblems(auth: unknown): SettingsProblem[] {
  if (!isRecord(auth)) return []
  const problems = hmacSchemeProblems(auth)
  const header = auth.header
  if (typeof header === 'string' && header !== '' && !isHeaderName(header)) {
    problems.push({ path: ['auth', 'header'], message: `auth.header ${JSON.stringify(header)} is not a valid HTTP header name (${HEADER_NAME_RULE})` })
  }
  return problems
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
