// `/api/run/<projectId>/<slug>[/{param}...]` split into its segments. Each segment is decoded on
// its own after splitting, so an encoded `/` or `..` stays inside one segment's value and can never
// create a new segment or reach another route.

const RUN_PREFIX = '/api/run/'

export interface RunPath {
  projectId: string
  slug: string
  /** Decoded values of the segments after the slug. */
  params: string[]
}

/** The parsed run path, or null for any malformed shape (empty segments, bad escapes). */
export function parseRunPath(pathname: string): RunPath | null {
  if (!pathname.startsWith(RUN_PREFIX)) return null
  const raw = pathname.slice(RUN_PREFIX.length).split('/')
  if (raw.length < 2) return null
  const projectId = decodeSegment(raw[0]!)
  const slug = decodeSegment(raw[1]!)
  if (projectId === null || slug === null) return null
  const params: string[] = []
  for (let i = 2; i < raw.length; i++) {
    const value = decodeSegment(raw[i]!)
    if (value === null) return null
    params.push(value)
  }
  return { projectId, slug, params }
}

/** A decoded segment, or null when it is empty or a bad escape. Most segments hold no escape. */
function decodeSegment(segment: string): string | null {
  if (segment === '') return null
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    return null
  }
}

/** Query parameters as the engine takes them: repeated names become arrays; `_trace` is ours. */
export function queryRecord(search: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {}
  for (const [name, value] of search) {
    if (name === '_trace' || isDangerousKey(name)) continue
    // hasOwn: a key such as `toString` must not find Object.prototype's.
    const previous = Object.hasOwn(query, name) ? query[name] : undefined
    if (previous === undefined) query[name] = value
    else query[name] = Array.isArray(previous) ? [...previous, value] : [previous, value]
  }
  return query
}

/** Keys that would reach Object.prototype when assigned on a plain object. */
export function isDangerousKey(name: string): boolean {
  return name === '__proto__' || name === 'constructor' || name === 'prototype'
}
