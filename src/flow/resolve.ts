// Resolving settings against a run's scope: `{{ root.a.0.b }}` references and `${secrets.NAME}`.
// This is the hot path of every run: each distinct string is parsed once per flow version.
import type { Flow, Secrets } from '../project/model.js'
import { parseTemplate, type ParsedTemplate, type Reference } from './template.js'

/** What a run's references read: `{ [refName]: output, run: { id, startedAt, trigger, scheduledFor } }`. */
export type Scope = Record<string, unknown>

export interface RunInfo {
  id: string
  startedAt: string
  trigger: string
  /** Scheduled runs: the minute they are for (ISO); null otherwise. */
  scheduledFor?: string | null
}

/** A fresh scope holding only `run`; prototype-free so `{{ constructor }}` finds nothing. */
export function createScope(run: RunInfo): Scope {
  const scope: Scope = Object.create(null) as Scope
  scope.run = run
  return scope
}

/** Thrown when a template names a secret that is not set: the message names it, never a value. */
export class MissingSecretError extends Error {
  constructor(readonly secretName: string) {
    super(`secret ${secretName} is not set (add it to the project's .env file or set FLOWCTL_SECRET_${secretName})`)
    this.name = 'MissingSecretError'
  }
}

// Flow objects are replaced on reload, so a flow's parsed strings go away with it.
const templateCaches = new WeakMap<Flow, Map<string, ParsedTemplate>>()

/** The parse cache of one flow version. */
export function templateCacheOf(flow: Flow): Map<string, ParsedTemplate> {
  let cache = templateCaches.get(flow)
  if (!cache) {
    cache = new Map()
    templateCaches.set(flow, cache)
  }
  return cache
}

/** The resolver handed to nodes: replaces templates in a setting value, deeply. */
export function createResolver(flow: Flow, scope: Scope, secrets: Secrets): (value: unknown) => unknown {
  const cache = templateCacheOf(flow)
  return (value) => resolveValue(value, scope, secrets, cache)
}

/** Resolves strings (templates), arrays and plain objects; other values are returned as they are. */
export function resolveValue(
  value: unknown,
  scope: Scope,
  secrets: Secrets,
  cache: Map<string, ParsedTemplate> = new Map(),
): unknown {
  if (typeof value === 'string') return resolveString(value, scope, secrets, cache)
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, scope, secrets, cache))
  const result: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    result[key] = resolveValue((value as Record<string, unknown>)[key], scope, secrets, cache)
  }
  return result
}

function resolveString(text: string, scope: Scope, secrets: Secrets, cache: Map<string, ParsedTemplate>): unknown {
  // Most strings hold no template: skip the cache for them.
  if (!text.includes('{{') && !text.includes('${secrets.')) return text
  let parsed = cache.get(text)
  if (!parsed) {
    parsed = parseTemplate(text)
    cache.set(text, parsed)
  }
  if (parsed.whole) return lookupReference(scope, parsed.whole)
  let out = ''
  for (const part of parsed.parts) {
    if (typeof part === 'string') out += part
    else if (part.kind === 'ref') out += textOf(lookupReference(scope, part))
    else {
      const secret = secrets.get(part.name)
      if (secret === undefined) throw new MissingSecretError(part.name)
      out += secret
    }
  }
  return out
}

/** The value at a reference's path; null when any step is missing (array items by index). */
export function lookupReference(scope: Scope, reference: Reference): unknown {
  return lookupPath(scope, reference.path)
}

export function lookupPath(scope: Scope, path: readonly string[]): unknown {
  let current: unknown = scope
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return null
    if (Array.isArray(current)) {
      const index = Number(segment)
      current = Number.isInteger(index) && index >= 0 ? current[index] : undefined
    } else {
      // Own properties only: `{{ start.constructor }}` must not reach the prototype.
      current = Object.hasOwn(current, segment) ? (current as Record<string, unknown>)[segment] : undefined
    }
  }
  return current === undefined ? null : current
}

/** How a value is written inside longer text: objects as JSON, missing and null as empty text. */
function textOf(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}
