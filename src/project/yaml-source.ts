// YAML (and JSON) source files parsed with positions, so every problem can point at the exact node.
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml'
import type { Position, Problem } from './model.js'

export type SourcePath = readonly (string | number)[]

export interface YamlSource {
  doc: Document
  lineCounter: LineCounter
  /** The document as plain data (map keys become strings). */
  data: unknown
  /** Syntax errors, already positioned; when there are any, `data` should not be trusted. */
  syntaxErrors: { pos: Position; message: string }[]
}

export function parseYamlSource(text: string): YamlSource {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, prettyErrors: true })
  const syntaxErrors = doc.errors.map((error) => {
    const at = error.linePos?.[0] ?? { line: 1, col: 1 }
    // yaml appends " at line L, column C:" and a code frame; the position is reported separately.
    const message = (error.message.split(/ at line \d+, column \d+/)[0] ?? error.message).trim()
    return { pos: { line: at.line, column: at.col }, message: `YAML syntax error: ${message}` }
  })
  const data = syntaxErrors.length > 0 ? null : doc.toJS({ maxAliasCount: 1000 })
  return { doc, lineCounter, data, syntaxErrors }
}

function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key)
}

/**
 * The position of the YAML node at `path` (map keys and sequence indexes). With `key`, the position
 * of the last segment's key instead of its value. Falls back to the deepest node found.
 */
export function positionAt(source: YamlSource, path: SourcePath, options: { key?: boolean; within?: number } = {}): Position {
  let node: unknown = source.doc.contents
  let offset = rangeStart(node) ?? 0
  for (const [index, segment] of path.entries()) {
    const last = index === path.length - 1
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && keyText(item.key) === String(segment))
      if (!pair) break
      const keyStart = rangeStart(pair.key)
      if (last && options.key && keyStart !== undefined) {
        offset = keyStart
        break
      }
      node = pair.value
      offset = rangeStart(pair.value) ?? keyStart ?? offset
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)]
      if (item === undefined) break
      node = item
      offset = rangeStart(item) ?? offset
    } else {
      break
    }
  }
  if (options.within !== undefined) offset = offsetWithin(source, node, offset, options.within)
  const { line, col } = source.lineCounter.linePos(offset)
  return { line, column: col }
}

/** The offset of character `within` of a one-line scalar's value (after its opening quote); the scalar's start otherwise. */
function offsetWithin(source: YamlSource, node: unknown, start: number, within: number): number {
  if (!isScalar(node) || !Array.isArray(node.range) || typeof node.value !== 'string') return start
  const [from, to] = node.range
  if (source.lineCounter.linePos(from).line !== source.lineCounter.linePos(to).line) return start
  if (node.type === 'PLAIN') return from + within
  // Quoted: one to one only when nothing in it was escaped.
  const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE'
  if (quoted && to - from === node.value.length + 2) return from + 1 + within
  return start
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range
  return Array.isArray(range) ? range[0] : undefined
}

/** Collects the problems of one file, positioned by source path. */
export class ProblemCollector {
  readonly problems: Problem[] = []

  constructor(
    readonly file: string,
    readonly source: YamlSource | null,
  ) {}

  at(pos: Position, message: string, severity: Problem['severity'] = 'error'): void {
    this.problems.push({ file: this.file, line: pos.line, column: pos.column, message, severity })
  }

  error(path: SourcePath, message: string, options: { key?: boolean; within?: number } = {}): void {
    this.at(this.position(path, options), message, 'error')
  }

  warning(path: SourcePath, message: string, options: { key?: boolean } = {}): void {
    this.at(this.position(path, options), message, 'warning')
  }

  get hasErrors(): boolean {
    return this.problems.some((p) => p.severity === 'error')
  }

  private position(path: SourcePath, options: { key?: boolean; within?: number }): Position {
    return this.source ? positionAt(this.source, path, options) : { line: 1, column: 1 }
  }
}

export function sortProblems(problems: Problem[]): Problem[] {
  return [...problems].sort(
    (a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.line - b.line || a.column - b.column,
  )
}
