// The fast way to read a plain flow file: js-yaml builds the data about 2.5× faster than yaml's
// Document + toJS, and yaml's Document (for positions) is only parsed when a problem needs one.
// Only for files on which both libraries agree: anything the two could read differently falls back
// to `parseYamlSource` (yaml, the reference). test/project/plain-yaml.test.ts compares them.
import { constructFromEvents, CORE_SCHEMA, EVENT_ID, getScalarValue, parseEvents, type Event } from 'js-yaml'
import { YamlSource } from './yaml-source.js'

/**
 * What js-yaml and yaml read differently, found by fuzzing both on generated documents: tags
 * (`!!float 1` is "1" in yaml), anchors (positions), tabs, a lone CR, directives, null and empty
 * keys ("" in yaml, "null" in js-yaml) and exponents that overflow. A match (often a false alarm,
 * such as " : " inside a string) only means the slower reference path reads the file.
 */
const READ_DIFFERENTLY = /(?:^|[\s,[{:])[!&]|\r(?!\n)|\t|^%|(?:^|[\s,[{?-])(?:~|null|Null|NULL)?[ ]*:(?:[ ]|$)|\d[eE][+-]?\d{3}/m

/**
 * The file's data read by js-yaml, with the yaml Document left for later; null when the file needs
 * the reference parser: js-yaml refuses it (syntax errors, duplicate keys, any alias: yaml limits
 * their expansion, which js-yaml does not; an empty file) or it holds something the two read differently.
 */
export function readPlainYaml(text: string): YamlSource | null {
  if (text.charCodeAt(0) === 0xfeff || READ_DIFFERENTLY.test(text)) return null
  let events: Event[]
  let documents: unknown[]
  try {
    events = parseEvents(text, {})
    documents = constructFromEvents(events, { source: text, schema: CORE_SCHEMA, maxAliases: 0 })
  } catch {
    return null
  }
  if (documents.length !== 1) return null
  return new YamlSource(text, documents[0], [], null, nodeItemOffsets(text, events))
}

/**
 * Where each item of the top-level `nodes` list starts (`nodes.0`, `nodes.1`, …): every loaded
 * node records its position, and these spare the Document for files without problems.
 */
function nodeItemOffsets(text: string, events: Event[]): Map<string, number> {
  const offsets = new Map<string, number>()
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
        const event = events[item]!
        if (event.type === EVENT_ID.MAPPING) offsets.set(`nodes\0${index}`, event.start)
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
