// The errors of an invalid input, at a bounded cost (SPEC §18: rejecting a 1 MiB body costs at most
// 50 ms of CPU). ajv with `allErrors` makes an error object for every failing value: 100,000 bad
// array items cost 100–300 ms before a single line is written. So a body is first checked with a
// validator that stops at its first error (for a valid body that is the whole check, as cheap as
// before), and only an invalid one is looked at again:
// a copy of its first VIEW_VALUES values (in document order) is made:
// - when that copy is the whole body (a small body), it is checked with `allErrors`: every error,
//   counted exactly;
// - otherwise the first LARGE_VIEW_VALUES values are checked (containers past the budget are cut
//   short), only the errors that the cut cannot have caused are kept, and the list ends with
//   `… and more` or `… and possibly more`, since the rest was not checked.
import type { ErrorObject, ValidateFunction } from 'ajv'
import { MORE_ERRORS, POSSIBLY_MORE_ERRORS } from './reason.js'

export type InputLocation = 'path' | 'query' | 'headers' | 'body'

/** A body with at most this many values is checked whole again, for every error, counted exactly. */
export const VIEW_VALUES = 10_000
/** The values of a larger body that the second check sees: enough to find 20 errors, and cheap. */
const LARGE_VIEW_VALUES = 1_000
/** Errors listed for a large body before `… and more` (SPEC §17's list shows 20). */
const LISTED_ERRORS = 20

/** Keywords whose result can change when a part of the data is cut away, or depends on another branch's result. */
const VIEW_UNSAFE_KEYWORDS = new Set(['anyOf', 'oneOf', 'if', 'contains', 'unevaluatedProperties', 'unevaluatedItems'])
/** Errors that stay true on a container that was cut short: they concern values the view kept, or grow with them. */
const TRUE_ON_CUT_CONTAINER = new Set(['type', 'additionalProperties', 'propertyNames', 'additionalItems', 'maxItems', 'maxProperties', 'uniqueItems'])

export interface BodyCheck {
  /** Stops at the first error (`allErrors: false`). */
  first: ValidateFunction
  /** Every error (`allErrors: true`); compiled on the first invalid body. */
  all: () => ValidateFunction
  /** Whether errors found on a cut view of the body are errors of the whole body (see VIEW_UNSAFE_KEYWORDS). */
  viewSafe: boolean
}

/** The errors of a body, or an empty list when it is valid. Defaults are written into `body`, as ajv does. */
export function bodyErrors(check: BodyCheck, body: unknown, location: InputLocation = 'body'): string[] {
  if (check.first(body)) return []
  const firstErrors = formatErrors(location, check.first.errors)
  const cut = new WeakSet<object>()
  const view = viewOf(body, { left: VIEW_VALUES, cut })
  const all = check.all()
  if (typeof view !== 'object' || view === null || !cut.has(view)) {
    // The whole body: every error. (Valid cannot happen, same schema; the first errors stand in.)
    return all(view) ? firstErrors : formatErrors(location, all.errors)
  }
  if (!check.viewSafe) return [...firstErrors, POSSIBLY_MORE_ERRORS]
  // Cut from the view, not the body: walking a body's object of 100,000 keys again costs ~17 ms.
  const smaller = viewOf(view, { left: LARGE_VIEW_VALUES, cut, sourceCut: cut })
  const found = all(smaller) ? [] : (all.errors ?? []).filter((error) => isTrueOfWhole(error, smaller, cut))
  const listed = [...new Set([...firstErrors, ...formatErrors(location, found)])]
  if (listed.length > LISTED_ERRORS) return [...listed.slice(0, LISTED_ERRORS), MORE_ERRORS]
  return [...listed, POSSIBLY_MORE_ERRORS]
}

/** Whether a schema is safe to check on a cut view: none of VIEW_UNSAFE_KEYWORDS anywhere in it. */
export function isViewSafe(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(isViewSafe)
  if (typeof schema !== 'object' || schema === null) return true
  for (const [key, value] of Object.entries(schema)) {
    if (VIEW_UNSAFE_KEYWORDS.has(key) || !isViewSafe(value)) return false
  }
  return true
}

export function formatErrors(location: InputLocation, found: ErrorObject[] | null | undefined): string[] {
  return (found ?? []).map((error) => `${location}${pointerOf(error)}: ${messageOf(error)}`)
}

/** Allowed values an enum message lists; longer enums end with `…` (the error string is capped anyway). */
const ENUM_VALUES_LISTED = 20

/**
 * ajv's message, except where it leaves the caller guessing: an enum lists its allowed values
 * (`must be one of "s", "m", "l"`, SPEC §21) and a const its value, as JSON.
 */
function messageOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    const values = params.allowedValues as unknown[]
    const listed = values.slice(0, ENUM_VALUES_LISTED).map((value) => JSON.stringify(value) ?? String(value))
    return `must be one of ${listed.join(', ')}${values.length > ENUM_VALUES_LISTED ? ', …' : ''}`
  }
  if (error.keyword === 'const' && 'allowedValue' in params) return `must be ${JSON.stringify(params.allowedValue) ?? String(params.allowedValue)}`
  return error.message ?? 'is invalid'
}

/** Where the problem is: for a missing or unexpected property, the property itself. */
function pointerOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  const property =
    error.keyword === 'required'
      ? params.missingProperty
      : error.keyword === 'additionalProperties'
        ? params.additionalProperty
        : error.keyword === 'dependentRequired' || error.keyword === 'dependencies'
          ? params.missingProperty
          : undefined
  return typeof property === 'string' ? `${error.instancePath}/${escapePointer(property)}` : error.instancePath
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1')
}

interface ViewState {
  left: number
  /** Containers of the view that lack a part of the original (themselves or below). */
  cut: WeakSet<object>
  /** When `value` is itself a view: its cut containers, whose copies are cut too. */
  sourceCut?: WeakSet<object>
}

/** A copy of the first `state.left` values of `value`, in document order. */
function viewOf(value: unknown, state: ViewState): unknown {
  state.left--
  if (typeof value !== 'object' || value === null) return value
  let whole = !state.sourceCut?.has(value)
  const keep = (item: unknown) => {
    const copy = viewOf(item, state)
    if (typeof copy === 'object' && copy !== null && state.cut.has(copy)) whole = false
    return copy
  }
  let copy: object
  if (Array.isArray(value)) {
    const items: unknown[] = []
    for (const item of value) {
      if (state.left <= 0) break
      items.push(keep(item))
    }
    if (items.length < value.length) whole = false
    copy = items
  } else {
    // for…in with a break: Object.entries of an object with 50,000 keys alone costs ~20 ms.
    const entries: [string, unknown][] = []
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue
      if (state.left <= 0) {
        whole = false
        break
      }
      entries.push([key, keep((value as Record<string, unknown>)[key])])
    }
    // fromEntries defines own properties: a `__proto__` key stays a key.
    copy = Object.fromEntries(entries)
  }
  if (!whole) state.cut.add(copy)
  return copy
}

/** Whether an error found on the view is also an error of the whole body. */
function isTrueOfWhole(error: ErrorObject, view: unknown, cut: WeakSet<object>): boolean {
  let node = view
  for (const segment of error.instancePath.split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return false
    node = (node as Record<string, unknown>)[segment.replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  const whole = typeof node !== 'object' || node === null || !cut.has(node)
  return whole || TRUE_ON_CUT_CONTAINER.has(error.keyword)
}
