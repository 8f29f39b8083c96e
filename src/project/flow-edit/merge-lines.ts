// Carrying an edit onto the file as it was written. yaml renders a Document in its own layout
// (one space before a comment, `[ a ]`, a comment after `key:` on a line of its own), so the
// edited Document is never written as rendered: the lines that changed between the rendering of
// the original and the rendering of the edited Document are merged into the original text, a
// three-way merge whose base is the original's rendering. Every line the edit did not touch stays
// byte for byte as it was.
import { diffArrays } from 'diff'

/**
 * Line diffs give up past this many differing lines (the merge then returns null and the caller
 * writes yaml's rendering): a diff costs O(lines × differences), and no request may stall the server.
 */
const MAX_EDIT_LENGTH = 300

/**
 * `written` with the change from `base` to `edited` applied. `base` and `edited` are renderings
 * of one Document before and after the edit; `written` is the file the Document was parsed from.
 * Each hunk of the edit (base → edited, exact lines) replaces the lines of `written` that its base
 * lines are paired with (by content, as layout differs); lines outside every hunk stay as written.
 * Null when the texts differ too much to be diffed within MAX_EDIT_LENGTH.
 */
export function mergeEdit(written: string, base: string, edited: string): string | null {
  const eol = written.includes('\r\n') ? '\r\n' : '\n'
  const ours = written.split(/\r?\n/)
  const baseLines = base.split('\n')
  const theirs = edited.split('\n')
  const toOurs = pairLines(baseLines.map(lineContent), ours.map(lineContent))
  const hunks = hunksOf(baseLines, theirs)
  if (!toOurs || !hunks) return null
  const out: string[] = []
  let o = 0
  for (const hunk of hunks) {
    const [from, to] = oursRange(toOurs, hunk.base, hunk.base + hunk.removed, ours.length)
    const start = Math.max(from, o)
    out.push(...ours.slice(o, start))
    for (let k = 0; k < hunk.added; k++) {
      const line = theirs[hunk.edited + k]!
      const was = k < hunk.removed ? toOurs[hunk.base + k]! : -1
      out.push(was >= 0 ? keepCommentColumn(ours[was]!, line) : line)
    }
    o = Math.max(to, start)
  }
  out.push(...ours.slice(o))
  return out.join(eol)
}

interface Hunk {
  /** First base line replaced, and how many. */
  base: number
  removed: number
  /** First edited line put in their place, and how many. */
  edited: number
  added: number
}

function hunksOf(base: string[], edited: string[]): Hunk[] | null {
  const hunks: Hunk[] = []
  let i = 0
  let j = 0
  const changes = diffArrays(base, edited, { maxEditLength: MAX_EDIT_LENGTH })
  if (!changes) return null
  for (let c = 0; c < changes.length; c++) {
    const change = changes[c]!
    if (!change.added && !change.removed) {
      i += change.count
      j += change.count
      continue
    }
    const next = changes[c + 1]
    const removed = change.removed ? change.count : 0
    const added = change.added ? change.count : next?.added ? next.count : 0
    if (change.removed && next?.added) c++
    hunks.push({ base: i, removed, edited: j, added })
    i += removed
    j += added
  }
  return hunks
}

/** The lines of `written` that base lines [from, to) stand for: from the paired line before to the paired line after. */
function oursRange(toOurs: Int32Array, from: number, to: number, length: number): [number, number] {
  const before = (i: number) => {
    for (let k = i; k >= 0; k--) if (toOurs[k]! >= 0) return toOurs[k]! + 1
    return 0
  }
  const after = (i: number) => {
    for (let k = i; k < toOurs.length; k++) if (toOurs[k]! >= 0) return toOurs[k]!
    return length
  }
  if (from === to) {
    const at = before(from - 1)
    return [at, at]
  }
  const start = toOurs[from]! >= 0 ? toOurs[from]! : before(from - 1)
  const end = toOurs[to - 1]! >= 0 ? toOurs[to - 1]! + 1 : after(to)
  return [start, end]
}

/** For each line of `a`, the index of the equal line of `b` it is paired with, or -1. */
function pairLines(a: string[], b: string[]): Int32Array | null {
  const paired = new Int32Array(a.length).fill(-1)
  let i = 0
  let j = 0
  const changes = diffArrays(a, b, { maxEditLength: MAX_EDIT_LENGTH })
  if (!changes) return null
  for (const change of changes) {
    if (change.added) j += change.count
    else if (change.removed) i += change.count
    else for (let k = 0; k < change.count; k++) paired[i++] = j++
  }
  return paired
}

/** A line's content for pairing: no comment, no indentation, spaces collapsed, no padding inside brackets. */
function lineContent(line: string): string {
  const trimmed = line.trim()
  if (trimmed.startsWith('#')) return trimmed
  const at = commentStart(line)
  return (at < 0 ? line : line.slice(0, at))
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/([[{]) /g, '$1')
    .replace(/ ([\]}])/g, '$1')
}

/** Where a line's trailing comment starts (a `#` after a space, outside quotes), or -1. */
function commentStart(line: string): number {
  let quote: string | null = null
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quote) {
      if (c === '\\' && quote === '"') i++
      else if (c === quote) quote = null
    } else if (c === '"' || c === "'") quote = c
    else if (c === '#' && (i === 0 || line[i - 1] === ' ' || line[i - 1] === '\t')) return i
  }
  return -1
}

/** The edited line with its comment in the column the original line had it (aligned comments stay aligned). */
function keepCommentColumn(original: string, edited: string): string {
  const was = commentStart(original)
  const now = commentStart(edited)
  if (was < 0 || now < 0 || original.slice(was) !== edited.slice(now)) return edited
  const code = edited.slice(0, now).trimEnd()
  return code.length < was ? code.padEnd(was) + edited.slice(now) : edited
}
