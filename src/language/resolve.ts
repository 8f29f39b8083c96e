// Resolving settings against a run's scope: `{{ root.a.0.b }}` references, `{{= expressions }}` and
// `${secrets.NAME}`. This is the hot path of every run: each distinct string is parsed once per flow
// version, and resolving stays synchronous. JSONata evaluates asynchronously, so the engine evaluates a
// node's expressions just before the node runs (`evaluateNodeExpressions`) and `resolve` reads the values.
import type { Flow, FlowNode, Secrets } from '../model/project.js'
import { compileExpression, evaluateExpression, type CompiledExpression, type ExpressionLimits } from './expression.js'
import { parseTemplate, type ExpressionPart, type ParsedTemplate, type Reference } from './template.js'

/** What a run's references read: `{ [refName]: output, run: { id, startedAt, trigger, scheduledFor } }`. */
export type Scope = Record<string, unknown>

export interface RunInfo {
  id: string
  startedAt: string
  trigger: string
  /** Scheduled runs: the minute they are for (ISO); null otherwise. */
  scheduledFor?: string | null
  /** Flows with a callback wait, in runs that may park: the URL that resumes the run's next wait (SPEC §22). */
  resumeUrl?: string | null
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

/** Values of the expressions of the node about to run, by parsed part. */
export type ExpressionValues = Map<ExpressionPart, unknown>

/** The resolver handed to nodes: replaces templates in a setting value, deeply. */
export function createResolver(flow: Flow, scope: Scope, secrets: Secrets, expressionValues: ExpressionValues = new Map()): (value: unknown) => unknown {
  const cache = templateCacheOf(flow)
  return (value) => resolveValue(value, scope, secrets, cache, expressionValues)
}

/** Resolves strings (templates), arrays and plain objects; other values are returned as they are. */
export function resolveValue(
  value: unknown,
  scope: Scope,
  secrets: Secrets,
  cache: Map<string, ParsedTemplate> = new Map(),
  expressionValues: ExpressionValues = new Map(),
): unknown {
  if (typeof value === 'string') return resolveString(value, scope, secrets, cache, expressionValues)
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, scope, secrets, cache, expressionValues))
  const result: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    result[key] = resolveValue((value as Record<string, unknown>)[key], scope, secrets, cache, expressionValues)
  }
  return result
}

function parsedFrom(cache: Map<string, ParsedTemplate>, text: string): ParsedTemplate {
  let parsed = cache.get(text)
  if (!parsed) {
    parsed = parseTemplate(text)
    cache.set(text, parsed)
  }
  return parsed
}

function resolveString(text: string, scope: Scope, secrets: Secrets, cache: Map<string, ParsedTemplate>, values: ExpressionValues): unknown {
  // Most strings hold no template: skip the cache for them.
  if (!text.includes('{{') && !text.includes('${secrets.')) return text
  const parsed = parsedFrom(cache, text)
  if (parsed.whole) return parsed.whole.kind === 'ref' ? lookupReference(scope, parsed.whole) : expressionValue(values, parsed.whole)
  let out = ''
  for (const part of parsed.parts) {
    if (typeof part === 'string') out += part
    else if (part.kind === 'ref') out += textOf(lookupReference(scope, part))
    else if (part.kind === 'expr') out += textOf(expressionValue(values, part))
    else {
      const secret = secrets.get(part.name)
      if (secret === undefined) throw new MissingSecretError(part.name)
      out += secret
    }
  }
  return out
}

/** A template's pieces after resolving: literal text (secrets included: the author wrote them) and values. */
export type ResolvedPart = { literal: string } | { value: unknown }

/** Resolves a string piece by piece, for settings that place values by position (the http node's url). */
export function resolveParts(text: string, scope: Scope, secrets: Secrets, cache: Map<string, ParsedTemplate>, values: ExpressionValues): ResolvedPart[] {
  if (!text.includes('{{') && !text.includes('${secrets.')) return [{ literal: text }]
  return parsedFrom(cache, text).parts.map((part): ResolvedPart => {
    if (typeof part === 'string') return { literal: part }
    if (part.kind === 'ref') return { value: lookupReference(scope, part) }
    if (part.kind === 'expr') return { value: expressionValue(values, part) }
    const secret = secrets.get(part.name)
    if (secret === undefined) throw new MissingSecretError(part.name)
    return { literal: secret }
  })
}

function expressionValue(values: ExpressionValues, part: ExpressionPart): unknown {
  if (!values.has(part)) throw new Error(`the expression {{= ${part.source} }} was not evaluated before its node ran`)
  return values.get(part)
}

// Compiled expressions of one flow version, with the bounds they were compiled with.
const compiledCaches = new WeakMap<Flow, Map<string, CompiledExpression>>()
// The expressions in each node's settings (most nodes have none).
const nodeExpressions = new WeakMap<FlowNode, ExpressionPart[]>()

/**
 * Every `{{= }}` part in a node's settings, parsed through the flow's cache (so `resolve` finds them).
 * `literalSettings` (the kind's, such as a Start's `inputs`) hold schemas, not templates; the first
 * call for a node decides, which is the engine's, before the node's expressions are evaluated.
 */
export function expressionsOf(flow: Flow, node: FlowNode, literalSettings: readonly string[] = []): ExpressionPart[] {
  let found = nodeExpressions.get(node)
  if (found) return found
  found = []
  const cache = templateCacheOf(flow)
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.includes('{{=')) found?.push(...parsedFrom(cache, value).expressions)
    } else if (Array.isArray(value)) value.forEach(visit)
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(visit)
  }
  for (const [setting, value] of Object.entries(node.settings)) if (!literalSettings.includes(setting)) visit(value)
  nodeExpressions.set(node, found)
  return found
}

/** Evaluates a node's expressions against the scope into `values` (cleared first). Throws ExpressionError. */
export async function evaluateNodeExpressions(flow: Flow, node: FlowNode, scope: Scope, limits: ExpressionLimits, values: ExpressionValues): Promise<void> {
  values.clear()
  const parts = expressionsOf(flow, node)
  if (parts.length === 0) return
  let compiled = compiledCaches.get(flow)
  if (!compiled) {
    compiled = new Map()
    compiledCaches.set(flow, compiled)
  }
  for (const part of parts) {
    if (values.has(part)) continue
    let expression = compiled.get(part.source)
    if (!expression) {
      expression = compileExpression(part.source, limits)
      compiled.set(part.source, expression)
    }
    values.set(part, await evaluateExpression(expression, scope))
  }
}

/** The value at a reference's path; null when any step is missing (array items by index). */
function lookupReference(scope: Scope, reference: Reference): unknown {
  return lookupPath(scope, reference.path)
}

function lookupPath(scope: Scope, path: readonly string[]): unknown {
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
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}
