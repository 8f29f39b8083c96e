import { hasTemplate, parseTemplate, TemplateSyntaxError } from '../language/template.js'
import { appendQuery, buildUrl, ORIGIN_DONE, UrlTemplateError } from '../language/url-template.js'
import { textOf } from '../language/resolve.js'
import { maskSecrets, secretNamesIn } from '../language/secrets.js'
import { AnswerTooLarge, bodyPrefix, DEFAULT_MAX_RESPONSE_BYTES, readCappedText, sendFollowingRedirects, RedirectRefused } from './http-answer.js'
import type { FetchAnswer } from '../model/run.js'
import { defineNodeKind } from './define.js'
import { RunBudgetSpent, StepFailure, type SettingsProblem } from './types.js'

const DEFAULT_TIMEOUT_MS = 10_000

/**
 * A value may not sit in the url's scheme, host or port (the run refuses it too; here it is caught
 * early when the text before it is plain). A url that is exactly one value is the whole URL (it must
 * be an absolute http(s) URL when the node runs); for one `{{= }}` expression a warning says that
 * nothing in it is encoded (SPEC §19). A secret may hold the base URL, so it is checked when the node runs.
 */
function checkUrl(settings: Record<string, unknown>): SettingsProblem[] {
  const url = settings.url
  if (typeof url !== 'string' || !hasTemplate(url)) return []
  let parts
  try {
    parts = parseTemplate(url).parts
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return [] // reported with the other templates
    throw error
  }
  const only = parts.length === 1 ? parts[0] : undefined
  if (only !== undefined && typeof only !== 'string' && only.kind === 'expr') {
    const message =
      "url is one {{= }} expression, so it is used as the whole URL and nothing in it is encoded; a caller's value in it can change the path, query or host. Write the base URL as text and place values with {{ }} or query"
    return [{ path: ['url'], message, severity: 'warning' }]
  }
  if (parts.length === 1) return []
  let before = ''
  for (const part of parts) {
    if (typeof part === 'string') before += part
    else if (part.kind === 'secret') return []
    else if (ORIGIN_DONE.test(before)) return []
    else {
      const message =
        'url has a {{ }} value in its scheme, host or port, so a caller could choose where the request goes; write the base URL in the flow file (or a ${secrets.X})'
      return [{ path: ['url'], message }]
    }
  }
  return []
}

interface HttpSettings {
  /** Upper-case (GET default). */
  method: string
  /** The url as written (a template); built when the node runs. */
  url: string
  /** query, headers, body and form as written (bindings); undefined when not set. */
  query: unknown
  headers: unknown
  body: unknown
  form: unknown
  failOnStatus: boolean
  timeoutMs: number
  maxResponseBytes: number
  /** Lower-case names of the headers written with a `${secrets.X}`. */
  secretHeaders: ReadonlySet<string>
}

function parseHttpSettings(settings: Record<string, unknown>): HttpSettings {
  return {
    method: String(settings.method ?? 'get').toUpperCase(),
    url: String(settings.url ?? ''),
    query: settings.query,
    headers: settings.headers,
    body: settings.body,
    form: settings.form,
    failOnStatus: settings.failOnStatus === true,
    timeoutMs: typeof settings.timeoutMs === 'number' ? settings.timeoutMs : DEFAULT_TIMEOUT_MS,
    maxResponseBytes: typeof settings.maxResponseBytes === 'number' ? settings.maxResponseBytes : DEFAULT_MAX_RESPONSE_BYTES,
    secretHeaders: headersFromSecrets(settings.headers),
  }
}

/**
 * Calls an HTTP endpoint. A network error or timeout fails the node; an HTTP status does so only with
 * `failOnStatus`. A 429 or 5xx answer is marked retryable: with `retry`, the engine tries again.
 * `timeoutMs` covers the whole answer, body included; a body past `maxResponseBytes` fails the node;
 * redirects to another origin do not carry credential headers (see http-answer.ts).
 */
export const httpNode = defineNodeKind({
  type: 'http',
  description: 'Sends an HTTP request; its output is { status, headers, body }.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    not: { required: ['body', 'form'] },
    properties: {
      description: { type: 'string' },
      method: { enum: ['get', 'post', 'put', 'patch', 'delete', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'], default: 'get' },
      url: {
        type: 'string',
        description: 'The URL; {{ }} values inside it are URL-encoded for their place (path, query) and cannot change its scheme, host or port.',
      },
      query: { type: 'object', description: 'Query parameters (bindings), each value URL-encoded; a list repeats the parameter.' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: { description: 'The request body: text as is, anything else as JSON.' },
      form: { type: 'object', description: 'A body sent as application/x-www-form-urlencoded (bindings); not together with body.' },
      failOnStatus: { type: 'boolean', default: false, description: 'Fail the node on a 4xx or 5xx answer (by default it is output).' },
      timeoutMs: { type: 'integer', minimum: 1, default: DEFAULT_TIMEOUT_MS, description: 'Time for the whole answer, body included.' },
      maxResponseBytes: { type: 'integer', minimum: 1, default: DEFAULT_MAX_RESPONSE_BYTES, description: 'A larger answer body fails the node.' },
    },
  },
  parseSettings: parseHttpSettings,
  ports: () => ['out'],
  checkSettings: checkUrl,
  sendsRequests: true,
  async execute(context, settings) {
    const { method, timeoutMs } = settings
    let url: URL
    try {
      url = buildUrl(context.resolveParts(settings.url))
    } catch (error) {
      if (error instanceof UrlTemplateError) throw new Error(`HTTP ${method} request ${error.message}`)
      throw error
    }
    if (settings.query !== undefined) appendQuery(url, (context.resolve(settings.query) ?? {}) as Record<string, unknown>)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries((context.resolve(settings.headers ?? {}) ?? {}) as Record<string, unknown>)) {
      headers[name.toLowerCase()] = String(value ?? '')
    }
    const secretHeaders = new Set(settings.secretHeaders)
    // A secret can also arrive through a reference (a `set` node that holds `${secrets.X}`).
    for (const [name, value] of Object.entries(headers)) if (maskSecrets(value, context.project.secrets) !== value) secretHeaders.add(name)
    let body: string | undefined
    if (settings.form !== undefined && method !== 'GET') {
      const form = new URLSearchParams()
      appendForm(form, (context.resolve(settings.form) ?? {}) as Record<string, unknown>)
      body = form.toString()
      headers['content-type'] ??= 'application/x-www-form-urlencoded'
    } else if (settings.body !== undefined && method !== 'GET') {
      const value = context.resolve(settings.body)
      body = typeof value === 'string' ? value : JSON.stringify(value)
      if (typeof value !== 'string' && !headers['content-type']) headers['content-type'] = 'application/json'
    }
    // One deadline for the request, its redirects and the whole body.
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)])
    let response: FetchAnswer | undefined
    let text: string
    // What a failed step shows beside its reason (SPEC §21); the engine masks secrets in it.
    const failed = (reason: string, body: string | null = null, cause?: unknown) =>
      new StepFailure(`HTTP ${method} request ${reason}`, { http: { method, url: url.href, status: response?.status ?? null, body } }, { cause })
    try {
      response = await sendFollowingRedirects(context.fetch, context.node, { method, url, headers, body, secretHeaders, signal })
      text = await readCappedText(response, settings.maxResponseBytes, signal)
    } catch (error) {
      // The run's http budget (limits.httpCallsPerRun) is spent: its plain reason, not a network error.
      if (error instanceof RunBudgetSpent) throw error
      if (error instanceof AnswerTooLarge || error instanceof RedirectRefused) throw failed(error.message)
      throw failed(failureReason(error, context.signal, timeoutMs), null, error)
    }
    if (settings.failOnStatus && response.status >= 400) {
      throw failed(`answered ${response.status} ${response.statusText}`.trim(), bodyPrefix(text))
    }
    let parsed: unknown = text
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = text
      }
    }
    const retryable = response.status === 429 || response.status >= 500
    return { output: { status: response.status, headers: Object.fromEntries(response.headers), body: parsed }, retryable }
  },
})

/** Lower-case names of the headers whose setting uses a `${secrets.X}`. */
function headersFromSecrets(setting: unknown): Set<string> {
  const names = new Set<string>()
  if (setting && typeof setting === 'object') {
    for (const [name, value] of Object.entries(setting)) if (typeof value === 'string' && secretNamesIn(value).length > 0) names.add(name.toLowerCase())
  }
  return names
}

function appendForm(form: URLSearchParams, values: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(values)) {
    for (const item of Array.isArray(value) ? value : [value]) if (item !== null && item !== undefined) form.append(key, textOf(item))
  }
}

/** Why a request failed, in words: its own timeout, the run being stopped, or the network (with the system code). */
function failureReason(error: unknown, runSignal: AbortSignal, timeoutMs: number): string {
  if (runSignal.aborted) return 'stopped with the run'
  if (error instanceof Error && error.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : ''
  return detail ? `network error (${detail})` : 'network error'
}
