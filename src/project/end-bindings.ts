// Which properties of an End's body may be null when the run answers (SPEC §20): a binding to an
// optional input, to the output of a node that did not run on every path to the End, to a field an
// onError branch replaces, or to anything flowctl cannot see the shape of (an http answer's body, an
// expression). The OpenAPI generator marks those `nullable`, so typed clients handle the null.
import { parseTemplate } from '../language/template.js'
import { reachableFrom } from '../model/flow-graph.js'
import type { Flow, FlowNode, JsonSchema, StartInfo } from '../model/project.js'
import { isRecord } from '../internal/is-record.js'

/**
 * Output fields each kind always sets (SPEC §2, §10, §13). A kind not listed, a field not listed or
 * a path deeper than one field is "cannot tell". `get` is absent: its output is null when missing.
 */
const FIXED_OUTPUT_FIELDS: Record<string, readonly string[]> = {
  insert: ['insertedId', 'acknowledged'],
  if: ['result'],
  switch: ['value', 'port'],
  find: ['documents', 'count'],
  update: ['matched', 'modified'],
  delete: ['deleted'],
  each: ['results', 'failed'],
  http: ['status', 'headers'],
  call: ['status'],
}
const RUN_FIELDS = new Set(['id', 'startedAt', 'trigger'])
const ERROR_FIELDS = new Set(['error', 'attempts'])

/** Paths (property names from the body's top) of the End's body values that may be null or missing. */
export function nullableBodyPaths(flow: Flow, end: FlowNode): string[][] {
  const paths: string[][] = []
  const walk = (value: unknown, path: string[]) => {
    if (isRecord(value)) {
      for (const [key, item] of Object.entries(value)) walk(item, [...path, key])
    } else if (path.length > 0 && mayBeMissing(flow, end, value)) paths.push(path)
  }
  walk(end.settings.body, [])
  return paths
}

/** Whether a setting's value, resolved at `at`, can be null: text and literals cannot, a lone reference may. */
function mayBeMissing(flow: Flow, at: FlowNode, value: unknown, depth = 0): boolean {
  if (value === null || value === undefined) return true
  if (typeof value !== 'string' || !value.includes('{{')) return false
  let whole
  try {
    whole = parseTemplate(value).whole
  } catch {
    return true
  }
  // Text around a reference is text (a missing value is written as empty text).
  if (!whole) return false
  // An expression's result (undefined included) is only known when it runs.
  if (whole.kind === 'expr' || depth > 8) return true
  return referenceMayBeMissing(flow, at, whole.path, depth)
}

function referenceMayBeMissing(flow: Flow, at: FlowNode, path: string[], depth: number): boolean {
  const [root, field, ...deeper] = path
  if (root === 'run') return path.length > 2 || (field !== undefined && !RUN_FIELDS.has(field))
  const node = flow.nodes.find((candidate) => candidate.refName === root)
  if (!node) return true
  if (flow.start && node.id === flow.start.node.id) return inputMayBeMissing(flow.start, path.slice(1))
  if (!runsBeforeEveryArrival(flow, node, at)) return true
  if (field === undefined) return node.type === 'get' || !(node.type in FIXED_OUTPUT_FIELDS || node.type === 'set')
  const onError = typeof node.settings.onError === 'string' ? node.settings.onError : null
  // The loader files the onError branch under the port `error`; the other ports are the usual way on.
  const usualWays = Object.entries(node.next).flatMap(([port, target]) => (port === 'error' && onError ? [] : [target]))
  if (onError && deeper.length === 0 && ERROR_FIELDS.has(field)) return reaches(flow, usualWays, at)
  // After a failure the output is `{ error, attempts }`: the usual fields are gone on that branch.
  if (onError && reaches(flow, [onError], at)) return true
  if (deeper.length > 0) return true
  if (node.type === 'set') {
    const values = node.settings.values as Record<string, unknown> | undefined
    return !values || !(field in values) || mayBeMissing(flow, node, values[field], depth + 1)
  }
  return !(FIXED_OUTPUT_FIELDS[node.type] ?? []).includes(field)
}

/** A Start input is there when it is a path parameter, required or defaulted, and not nullable, at every level. */
function inputMayBeMissing(start: StartInfo, names: string[]): boolean {
  if (names.length === 0) return false
  const groups = [start.inputs.body, start.inputs.path, start.inputs.query, start.inputs.headers]
  const group = groups.find((schema) => propertyOf(schema, names[0]!) !== undefined)
  if (!group) return true
  let parent: JsonSchema = group
  for (const name of names) {
    const property = propertyOf(parent, name)
    if (!property) return true
    const required = Array.isArray(parent.required) && parent.required.includes(name)
    const alwaysThere = group === start.inputs.path || required || property.default !== undefined
    if (!alwaysThere || property.default === null || allowsNull(property)) return true
    parent = property
  }
  return false
}

function propertyOf(schema: JsonSchema | undefined, name: string): JsonSchema | undefined {
  const properties = schema?.properties
  if (!properties || typeof properties !== 'object') return undefined
  const property = (properties as Record<string, unknown>)[name]
  return isRecord(property) ? (property as JsonSchema) : undefined
}

function allowsNull(schema: JsonSchema): boolean {
  return schema.nullable === true || (Array.isArray(schema.type) && schema.type.includes('null')) || schema.type === 'null'
}

/** Every edge that leaves a node: its ports' and its onError branch. */
function edgesOf(flow: Flow, id: string): string[] {
  const node = flow.nodesById.get(id)
  if (!node) return []
  const onError = node.settings.onError
  return [...Object.values(node.next), ...(typeof onError === 'string' ? [onError] : [])].filter((target) => flow.nodesById.has(target))
}

/** Whether `target` is reached from any of `from`. */
function reaches(flow: Flow, from: string[], target: FlowNode): boolean {
  return from.some((id) => id === target.id || reachableFrom(id, (next) => edgesOf(flow, next)).reached.has(target.id))
}

/** Whether `node` runs on every path from the Start to `at` (without it, `at` cannot be reached). */
function runsBeforeEveryArrival(flow: Flow, node: FlowNode, at: FlowNode): boolean {
  if (!flow.start) return false
  const { reached } = reachableFrom(flow.start.node.id, (id) => (id === node.id ? [] : edgesOf(flow, id)))
  return !reached.has(at.id)
}
