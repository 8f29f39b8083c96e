// Renaming a node rewrites what points at it in the same flow: edges (`next`, `onError`) name its
// id, and `{{ ref.field }}` references and `{{= }}` expressions name its reference name (its
// `name` in snake_case, or its id when it has no name). A rename is said explicitly
// (`rename: { from, to }`) or found: one node id gone and one new, the two nodes equal but for the
// id. A node whose `name` changed under the same id changes its reference name too.
import { isDeepStrictEqual } from 'node:util'
import { inspectExpression } from '../../language/expression.js'
import { hasTemplate, parseTemplate, TemplateSyntaxError } from '../../language/template.js'
import { getNodeKind } from '../../nodes/registry.js'
import { referenceName } from '../slug.js'
import { isRecord } from '../../internal/is-record.js'

type Plain = Record<string, unknown>

export interface NodeRename {
  from: string
  to: string
}

export interface RenameResult {
  /** The flow with the renamed ids and the rewritten references. */
  flow: Plain
  /** New id → old id of every renamed node (the YAML patch keeps those nodes' comments). */
  previousIds: Map<string, string>
}

/** Settings that are no templates: the node's own keys and the edges. */
const NOT_TEMPLATED = new Set(['id', 'type', 'name', 'next', 'onError'])

/**
 * `after` with the renames applied: explicit ones (`from` may still be the node's id in `after`),
 * then one found by comparing with `before`. Throws a RenameError when an explicit rename names no node.
 */
export function applyRenames(before: unknown, after: Plain, explicit: readonly NodeRename[]): RenameResult {
  const flow = structuredClone(after)
  const nodes = nodeList(flow)
  const beforeNodes = nodeList(before)
  const previousIds = new Map<string, string>()
  for (const { from, to } of explicit) {
    const node = nodes.find((n) => n.id === from) ?? nodes.find((n) => n.id === to)
    if (!node || (node.id === from && nodes.some((n) => n.id === to))) throw new RenameError(`rename: there is no node "${from}" to call "${to}"`)
    node.id = to
    previousIds.set(to, from)
  }
  const found = explicit.length === 0 ? foundRename(beforeNodes, nodes) : null
  if (found) previousIds.set(found.to, found.from)
  rewriteReferences(nodes, beforeNodes, previousIds)
  return { flow, previousIds }
}

export class RenameError extends Error {}

/** One node gone and one new, equal but for the id. */
function foundRename(before: Plain[], after: Plain[]): NodeRename | null {
  const afterIds = new Set(after.map((n) => n.id))
  const beforeIds = new Set(before.map((n) => n.id))
  const gone = before.filter((n) => !afterIds.has(n.id))
  const added = after.filter((n) => !beforeIds.has(n.id))
  if (gone.length !== 1 || added.length !== 1) return null
  const [old, now] = [gone[0]!, added[0]!]
  if (typeof old.id !== 'string' || typeof now.id !== 'string') return null
  return isDeepStrictEqual({ ...old, id: null }, { ...now, id: null }) ? { from: old.id, to: now.id } : null
}

function rewriteReferences(nodes: Plain[], beforeNodes: Plain[], previousIds: ReadonlyMap<string, string>): void {
  const ids = new Set(nodes.map((n) => n.id))
  const edgeRenames = new Map<string, string>()
  for (const [to, from] of previousIds) if (!ids.has(from)) edgeRenames.set(from, to)
  const refRenames = referenceRenames(nodes, beforeNodes, previousIds)
  if (edgeRenames.size === 0 && refRenames.size === 0) return
  for (const node of nodes) {
    if (typeof node.next === 'string') node.next = edgeRenames.get(node.next) ?? node.next
    else if (isRecord(node.next))
      for (const [port, target] of Object.entries(node.next)) if (typeof target === 'string') node.next[port] = edgeRenames.get(target) ?? target
    if (typeof node.onError === 'string') node.onError = edgeRenames.get(node.onError) ?? node.onError
    if (refRenames.size === 0) continue
    const literal = typeof node.type === 'string' ? (getNodeKind(node.type)?.literalSettings ?? []) : []
    for (const [key, value] of Object.entries(node)) {
      if (!NOT_TEMPLATED.has(key) && !literal.includes(key)) node[key] = rewriteStrings(value, refRenames)
    }
  }
}

/** Old reference name → new one, for nodes whose reference name changed; none that is still in use. */
function referenceRenames(nodes: Plain[], beforeNodes: Plain[], previousIds: ReadonlyMap<string, string>): Map<string, string> {
  const beforeById = new Map(beforeNodes.map((n) => [n.id, n]))
  const inUse = new Set(nodes.map(refNameOf))
  const renames = new Map<string, string>()
  for (const node of nodes) {
    if (typeof node.id !== 'string') continue
    const old = beforeById.get(previousIds.get(node.id) ?? node.id)
    if (!old) continue
    const [was, now] = [refNameOf(old), refNameOf(node)]
    if (was && now && was !== now && !inUse.has(was)) renames.set(was, now)
  }
  return renames
}

function refNameOf(node: Plain): string | null {
  const name = typeof node.name === 'string' && node.name.trim() !== '' ? node.name : node.id
  return typeof name === 'string' && name !== '' ? referenceName(name) : null
}

function rewriteStrings(value: unknown, renames: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return rewriteTemplate(value, renames)
  if (Array.isArray(value)) return value.map((item) => rewriteStrings(item, renames))
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewriteStrings(v, renames)]))
  return value
}

const REFERENCE_ROOT = /\{\{(?!=)(\s*)([A-Za-z0-9_-]+)(?=\s*\}\}|\.)/g

/** The roots of the template's references and expressions renamed; everything else as written. */
export function rewriteTemplate(text: string, renames: ReadonlyMap<string, string>): string {
  if (!hasTemplate(text)) return text
  let parsed
  try {
    parsed = parseTemplate(text)
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return text
    throw error
  }
  const edits: { at: number; length: number; text: string }[] = []
  const bodies = parsed.expressions.map((part) => [part.offset, part.offset + part.source.length] as const)
  for (const part of parsed.expressions) {
    const inspected = inspectExpression(part.source)
    if (!('roots' in inspected)) continue
    for (const root of inspected.roots) {
      const to = renames.get(root.name)
      const at = part.offset + root.at
      if (to !== undefined && text.startsWith(root.name, at)) edits.push({ at, length: root.name.length, text: to })
    }
  }
  for (const match of text.matchAll(REFERENCE_ROOT)) {
    const at = match.index + 2 + match[1]!.length
    const to = renames.get(match[2]!)
    if (to !== undefined && !bodies.some(([start, end]) => at >= start && at < end)) edits.push({ at, length: match[2]!.length, text: to })
  }
  edits.sort((a, b) => b.at - a.at)
  let out = text
  for (const edit of edits) out = out.slice(0, edit.at) + edit.text + out.slice(edit.at + edit.length)
  return out
}

function nodeList(flow: unknown): Plain[] {
  if (!isRecord(flow) || !Array.isArray(flow.nodes)) return []
  return flow.nodes.filter(isRecord)
}
