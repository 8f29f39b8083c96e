// The fast way to read a plain flow file: js-yaml builds the data about 2.5× faster than yaml's
// Document + toJS. Positions of problems come from js-yaml's events too (a warning in every flow
// must not cost a second parse); yaml's Document is only parsed for a position the events cannot
// give exactly as yaml would (block scalars, empty values, keys that are numbers or booleans).
// Anchors and aliases too: yaml's limit on alias expansion is replayed on the events (yaml-aliases.ts).
// Only for files on which both libraries agree: anything the two could read differently falls back
// to `parseYamlSource` (yaml, the reference). test/project/plain-yaml.test.ts compares them.
import { constructFromEvents, CORE_SCHEMA, EVENT_ID, getScalarValue, parseEvents, SCALAR_STYLE, type Event } from 'js-yaml'
import { aliasesExpandAsYaml } from './yaml-aliases.js'
import { MAX_ALIAS_COUNT, YamlSource, type PositionOptions, type SourcePath } from './yaml-source.js'

/**
 * What js-yaml and yaml read differently, found by fuzzing both on generated documents: tags
 * (`!!float 1` is "1" in yaml), tabs, a lone CR, directives, null and empty
 * keys ("" in yaml, "null" in js-yaml) and exponents that overflow. A match (often a false alarm,
 * such as " : " inside a string) only means the slower reference path reads the file.
 */
const READ_DIFFERENTLY = /(?:^|[\s,[{:])!|\r(?!\n)|\t|^%|(?:^|[\s,[{?-])(?:~|null|Null|NULL)?[ ]*:(?:[ ]|$)|\d[eE][+-]?\d{3}/m

/**
 * The file's data read by js-yaml, with the yaml Document left for later; null when the file needs
 * the reference parser: js-yaml refuses it (syntax errors, duplicate keys, an empty file), yaml would
 * refuse or read its aliases otherwise (an alias bomb: `aliasesExpandAsYaml`) or it holds something
 * the two read differently.
 */
export function readPlainYaml(text: string): YamlSource | null {
  if (text.charCodeAt(0) === 0xfeff || READ_DIFFERENTLY.test(text)) return null
  let events: Event[]
  let documents: unknown[]
  try {
    events = parseEvents(text, {})
    // Before js-yaml expands any alias: yaml's limit, whose refusal the reference reports.
    if (!aliasesExpandAsYaml(events, text, MAX_ALIAS_COUNT)) return null
    documents = constructFromEvents(events, { source: text, schema: CORE_SCHEMA, maxAliases: -1 })
  } catch {
    return null
  }
  if (documents.length !== 1) return null
  const nodeItems = nodeItemOffsets(text, events)
  const locate = (path: SourcePath, options: PositionOptions): number | undefined => {
    const plain = !options.key && options.within === undefined && path.length === 2 && path[0] === 'nodes'
    return (plain ? nodeItems.get(path[1] as number) : undefined) ?? eventOffset(text, events, path, options)
  }
  return new YamlSource(text, documents[0], [], null, locate)
}

/**
 * Where each item of the top-level `nodes` list starts (`nodes.0`, `nodes.1`, …): every loaded
 * node records its position, and these spare the Document for files without problems.
 */
function nodeItemOffsets(text: string, events: Event[]): Map<number, number> {
  const offsets = new Map<number, number>()
  // events: DOCUMENT, the top-level MAPPING, then key/value pairs until its POP.
  if (events[1]?.type !== EVENT_ID.MAPPING) return offsets
  let i = 2
  while (i < events.length && events[i]!.type !== EVENT_ID.POP) {
    const key = events[i]!
    const isNodes = key.type === EVENT_ID.SCALAR && getScalarValue(text, key) === 'nodes'
    i = skipNode(events, i)
    if (isNodes && events[i]?.type === EVENT_ID.SEQUENCE) {
      let item = i + 1
      for (let index = 0; item < events.length && events[item]!.type !== EVENT_ID.POP; index++) {
        // Only maps: any other item is a problem, and files with problems are read again by yaml.
        const start = events[item]!.type === EVENT_ID.MAPPING ? startOf(events[item], events[item + 1]) : undefined
        if (start !== undefined) offsets.set(index, start)
        item = skipNode(events, item)
      }
    }
    i = skipNode(events, i)
  }
  return offsets
}

/** The index just after the node that starts at `i` (a collection ends with its POP). */
function skipNode(events: Event[], i: number): number {
  const type = events[i]?.type
  if (type !== EVENT_ID.MAPPING && type !== EVENT_ID.SEQUENCE) return i + 1
  let depth = 0
  for (let j = i; j < events.length; j++) {
    const t = events[j]!.type
    if (t === EVENT_ID.MAPPING || t === EVENT_ID.SEQUENCE) depth++
    else if (t === EVENT_ID.POP && --depth === 0) return j + 1
  }
  return events.length
}

/** Plain scalars yaml's core schema reads as null, a boolean or a number (the test is wider than needed). */
const NOT_A_STRING = /^(?:[-+.\d~]|(?:null|true|false)$)/i

/**
 * The offset yaml's Document gives the node at `path` (see `positionAt`), found in the events;
 * undefined where the events cannot tell it exactly as yaml would.
 */
function eventOffset(text: string, events: Event[], path: SourcePath, options: PositionOptions): number | undefined {
  let at = 1 // events[0] is the document, events[1] its root node
  let offset = startOf(events[at], events[at + 1])
  if (offset === undefined) return undefined
  for (const [index, segment] of path.entries()) {
    const event = events[at]!
    let next: number | null
    if (event.type === EVENT_ID.MAPPING) {
      const key = findKey(text, events, at, String(segment))
      if (key === undefined) return undefined
      if (key === null) break
      if (index === path.length - 1 && options.key) return startOf(events[key])
      next = skipNode(events, key)
    } else if (event.type === EVENT_ID.SEQUENCE) {
      next = nthItem(events, at, segment)
      if (next === null) break
    } else {
      break
    }
    at = next
    offset = startOf(events[at], events[at + 1])
    if (offset === undefined) return undefined
  }
  return options.within === undefined ? offset : offsetWithin(text, events[at]!, offset, options.within)
}

/**
 * Where yaml's range of a node starts: after its anchor, a quoted scalar at its quote, an alias at its
 * `*`; undefined for block scalars and empty values.
 */
function startOf(event: Event | undefined, next?: Event): number | undefined {
  // `&k key: v` anchors the first key, yet js-yaml starts its block map at the `&`; yaml at the key.
  if (event?.type === EVENT_ID.MAPPING && next?.type === EVENT_ID.SCALAR && next.anchorStart - 1 === event.start) return startOf(next)
  if (event?.type === EVENT_ID.MAPPING || event?.type === EVENT_ID.SEQUENCE) return event.start
  if (event?.type === EVENT_ID.ALIAS) return event.anchorStart - 1
  if (event?.type !== EVENT_ID.SCALAR || event.valueStart < 0) return undefined
  if (event.style === SCALAR_STYLE.PLAIN) return event.valueStart
  const quoted = event.style === SCALAR_STYLE.SINGLE_QUOTED || event.style === SCALAR_STYLE.DOUBLE_QUOTED
  return quoted ? event.valueStart - 1 : undefined
}

/** The index of the key event `name` in the mapping at `map`; null when absent; undefined when unsure. */
function findKey(text: string, events: Event[], map: number, name: string): number | null | undefined {
  let unsure = false
  for (let key = map + 1; key < events.length && events[key]!.type !== EVENT_ID.POP; key = skipNode(events, skipNode(events, key))) {
    const event = events[key]!
    if (event.type !== EVENT_ID.SCALAR) {
      unsure = true
      continue
    }
    const value = getScalarValue(text, event)
    // yaml names such a key by its value ("1.0" is "1"): left to the Document unless another key matches.
    if (event.style === SCALAR_STYLE.PLAIN && NOT_A_STRING.test(value)) unsure = true
    else if (value === name) return key
  }
  return unsure ? undefined : null
}

/** The index of item `segment` of the sequence at `seq`, or null. */
function nthItem(events: Event[], seq: number, segment: string | number): number | null {
  const wanted = Number(segment)
  if (!Number.isInteger(wanted) || wanted < 0) return null
  let item = seq + 1
  for (let n = 0; n < wanted && item < events.length && events[item]!.type !== EVENT_ID.POP; n++) item = skipNode(events, item)
  return item < events.length && events[item]!.type !== EVENT_ID.POP ? item : null
}

/** Character `within` of a one-line string scalar's value, as `positionAt` counts it; undefined when unsure. */
function offsetWithin(text: string, event: Event, start: number, within: number): number | undefined {
  if (event.type !== EVENT_ID.SCALAR) return start
  const value = getScalarValue(text, event)
  const quoted = event.style !== SCALAR_STYLE.PLAIN
  if (!quoted && NOT_A_STRING.test(value)) return undefined
  const [from, to] = quoted ? [event.valueStart - 1, event.valueEnd + 1] : [event.valueStart, event.valueEnd]
  if (text.slice(from, to).includes('\n')) return start
  if (!quoted) return from + within
  return to - from === value.length + 2 ? from + 1 + within : start
}
