// The names of a project's OpenAPI operations (SPEC §5.2, §20): the one rule the generator writes and
// `validate` warns about, so the document and the warnings never disagree.
import type { Flow, StartInfo } from '../model/project.js'
import { compareText } from '../internal/compare.js'

/** A flow that is an operation of the document (it has a Start with an HTTP route). */
export interface NamedOperation {
  flow: Flow
  start: StartInfo
}

/** The operationId every project with an async Start gives `GET /api/result/<projectId>/{runId}`. */
export const RESULT_OPERATION_ID = 'getRunResult'

/** The name a Start asks for: its `operationId` setting, else the seed's `<startNodeId>_<method>`. */
export function baseOperationId(start: StartInfo): string {
  return start.operationId ?? `${start.node.id}_${start.method}`
}

/** `_<slug>` with `-` written `_`: client generators turn hyphens into something else each. */
export function slugSuffix(flow: Flow): string {
  return `_${flow.slug.replace(/-/g, '_')}`
}

/**
 * operationId by flow slug. A base name used by one operation is kept as it is; when several would
 * share one (or it is `reserved`), each of them gets `_<slug>`. Kept names are placed first, so a
 * suffixed name never takes one; a suffixed name still taken (an explicit id written that way) gets
 * `_2`, `_3` in slug order, so the document stays valid.
 */
export function operationIdsOf(operations: readonly NamedOperation[], reserved: readonly string[] = []): Map<string, string> {
  const uses = new Map<string, number>()
  for (const { start } of operations) uses.set(baseOperationId(start), (uses.get(baseOperationId(start)) ?? 0) + 1)
  const taken = new Set(reserved)
  const isShared = (base: string) => uses.get(base)! > 1 || reserved.includes(base)
  const ids = new Map<string, string>()
  const bySlug = [...operations].sort((a, b) => compareText(a.flow.slug, b.flow.slug))
  for (const { flow, start } of bySlug) {
    const base = baseOperationId(start)
    if (isShared(base)) continue
    taken.add(base)
    ids.set(flow.slug, base)
  }
  for (const { flow, start } of bySlug) {
    const base = baseOperationId(start)
    if (!isShared(base)) continue
    const wanted = `${base}${slugSuffix(flow)}`
    let id = wanted
    for (let n = 2; taken.has(id); n++) id = `${wanted}_${n}`
    taken.add(id)
    ids.set(flow.slug, id)
  }
  return ids
}

/** The summary of a Start's operation: its `summary` setting, else the Start's name. */
export function summaryOf(start: StartInfo): string {
  return start.summary ?? start.node.name
}
