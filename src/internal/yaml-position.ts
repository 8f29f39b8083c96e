// Line and column (1-based) of places in a YAML or JSON text, as error messages print them
// (file:line:column). What to point at is the caller's business; this only turns offsets into positions.
import type { LineCounter, YAMLError } from 'yaml'

export interface LineColumn {
  line: number
  column: number
}

/** The position of `offset` in `text`, as yaml's LineCounter gives it, without one (a single scan of the text up to it). */
export function positionInText(text: string, offset: number): LineColumn {
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return { line, column: offset - lineStart + 1 }
}

/** The position of `offset` from a LineCounter filled while parsing (`parseDocument(text, { lineCounter })`). */
export function positionFromCounter(lineCounter: LineCounter, offset: number): LineColumn {
  const { line, col } = lineCounter.linePos(offset)
  return { line, column: col }
}

/** Where a yaml node starts (its range's first offset); undefined for a missing node or one without a range. */
export function nodeStart(node: unknown): number | undefined {
  const range = (node as { range?: unknown } | null | undefined)?.range
  return Array.isArray(range) && typeof range[0] === 'number' ? range[0] : undefined
}

/**
 * A yaml parse error as a position and a message without yaml's own " at line L, column C:" and
 * code excerpt (the caller prints the position its own way). An error without a position is at 1:1.
 */
export function yamlErrorAt(error: YAMLError): LineColumn & { message: string } {
  const at = error.linePos?.[0] ?? { line: 1, col: 1 }
  const message = (error.message.split(/ at line \d+, column \d+/)[0] ?? error.message).trim()
  return { line: at.line, column: at.col, message }
}
