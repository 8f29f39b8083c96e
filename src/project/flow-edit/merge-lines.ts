// Carrying an edit onto the file as it was written. yaml renders a Document in its own layout
// (one space before a comment, `[ a ]`, a comment after `key:` on a line of its own), so the
// edited Document is never written as rendered: the lines that changed between the rendering of
// the original and the rendering of the edited Document are merged into the original text, a
// three-way merge whose base is the original's rendering. Every line the edit did not touch stays
// byte for byte as it was.
import { diffArrays } from 'diff'

/**
 * `written` with the change from `base` to `edited` applied. `base` and `edited` are renderings
 * of one Document before and after the edit; `written` is the file the Document was parsed from.
 */
export function mergeEdit(written: string, base: string, edited: string): string {
  const eol = written.includes('\r\n') ? '\r\n' : '\n'
  const ours = written.split(/\r?\n/)
  const baseLines = base.split('\n')
  const theirs = edited.split('\n')
  // The original and its rendering differ in layout only: lines are paired by their content.
  const toOurs = pairLines(baseLines, ours, (a, b) => lineContent(a) === lineContent(b))
  const toTheirs = pairLines(baseLines, theirs, (a, b) => a === b)
  const out: string[] = []
  let b = 0
  let o = 0
  let t = 0
  for (;;) {
    // The next base line that both sides kept bounds the chunk before it.
    let stable = b
    while (stable < baseLines.length && (toOurs[stable]! < 0 || toTheirs[stable]! < 0)) stable++
    const oEnd = stable < baseLines.length ? toOurs[stable]! : ours.length
    const tEnd = stable < baseLines.length ? toTheirs[stable]! : theirs.length
    out.push(...mergeChunk(baseLines.slice(b, stable), ours.slice(o, oEnd), theirs.slice(t, tEnd)))
    if (stable >= baseLines.length) break
    out.push(ours[oEnd]!)
    b = stable + 1
    o = oEnd + 1
    t = tEnd + 1
  }
  return out.join(eol)
}

/** For each line of `a`, the index of the line of `b` it is paired with, or -1. */
function pairLines(a: string[], b: string[], equal: (x: string, y: string) => boolean): Int32Array {
  const paired = new Int32Array(a.length).fill(-1)
  let i = 0
  let j = 0
  for (const change of diffArrays(a, b, { comparator: equal })) {
    if (change.added) j += change.count
    else if (change.removed) i += change.count
    else for (let k = 0; k < change.count; k++) paired[i++] = j++
  }
  return paired
}

/**
 * A chunk between lines both sides kept: untouched by the edit, the original's lines; else the
 * edit's lines, line by line where the chunk keeps its length (so only the edited lines change).
 */
function mergeChunk(base: string[], ours: string[], theirs: string[]): string[] {
  if (sameLines(base, theirs)) return ours
  if (base.length === ours.length && base.length === theirs.length) {
    return theirs.map((line, i) => (line === base[i] ? ours[i]! : keepCommentColumn(ours[i]!, line)))
  }
  return theirs
}

function sameLines(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i])
}

/** A line's content for pairing: no comment, no indentation, spaces collapsed, no padding inside brackets. */
export function lineContent(line: string): string {
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
