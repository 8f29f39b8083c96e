// YAML (and JSON) source files parsed with positions, so every problem can point at the exact node.
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type YAMLError } from 'yaml'
import { compareText } from '../internal/compare.js'
import { nodeStart, positionFromCounter, positionInText, yamlErrorAt } from '../internal/yaml-position.js'
import type { Position, Problem } from '../model/project.js'

export type SourcePath = readonly (string | number)[]

export interface PositionOptions {
  key?: boolean
  within?: number
}

/**
 * Offsets a faster reader can give without yaml's Document (plain-yaml.ts reads them from js-yaml's
 * events); undefined leaves the lookup to the Document.
 */
export type OffsetLocator = (path: SourcePath, options: PositionOptions) => number | undefined

/**
 * A parsed flow or settings file. The yaml Document (with its CST ranges, by far the largest part)
 * is only needed to point at a problem: it is parsed on first use and can be dropped again
 * (`dropParsed`), so a loaded project keeps the text of each file and no Document, data or offsets.
 */
export class YamlSource {
  #parsed: { doc: Document; lineCounter: LineCounter } | null
  #data: unknown
  #dataDropped = false
  #locate: OffsetLocator | null

  constructor(
    readonly text: string,
    /** The document as plain data (map keys become strings). */
    data: unknown,
    /** Syntax errors, already positioned; when there are any, `data` should not be trusted. */
    readonly syntaxErrors: { pos: Position; message: string }[],
    parsed: { doc: Document; lineCounter: LineCounter } | null = null,
    /** Offsets the reader can give without the Document (see plain-yaml.ts). */
    locate: OffsetLocator | null = null,
  ) {
    this.#parsed = parsed
    this.#data = data
    this.#locate = locate
  }

  /** The document as plain data (map keys become strings); after `dropParsed`, read from the text again. */
  get data(): unknown {
    if (this.#dataDropped) {
      this.#data = this.#positions().doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
      this.#dataDropped = false
    }
    return this.#data
  }

  /** The offset `positionAt` points at, when the reader can tell it without parsing the Document. */
  knownOffset(path: SourcePath, options: PositionOptions = {}): number | undefined {
    return this.#locate?.(path, options)
  }

  get doc(): Document {
    return this.#positions().doc
  }

  get lineCounter(): LineCounter {
    return this.#positions().lineCounter
  }

  /**
   * Forgets the Document, the data and the reader's offsets of a checked file: a loaded project keeps
   * only the text (about 5 KB less per flow file). Positions or data asked for later (a cross-file
   * problem) parse the text again, with the same result.
   */
  dropParsed(): void {
    this.#parsed = null
    this.#locate = null
    // A file with syntax errors has no data to read again.
    if (this.syntaxErrors.length === 0) {
      this.#data = undefined
      this.#dataDropped = true
    }
  }

  #positions(): { doc: Document; lineCounter: LineCounter } {
    this.#parsed ??= parseWithPositions(this.text)
    return this.#parsed
  }
}

function parseWithPositions(text: string): { doc: Document; lineCounter: LineCounter } {
  const lineCounter = new LineCounter()
  return { doc: parseDocument(text, { lineCounter, prettyErrors: true }), lineCounter }
}

/**
 * Parses a flow or settings file. With `json` (a `.json` file) the text is checked as JSON first, so
 * a broken JSON file is reported as JSON; valid JSON is then read as YAML (it is YAML) for positions.
 */
export function parseYamlSource(text: string, options: { json?: boolean } = {}): YamlSource {
  const parsed = parseWithPositions(text)
  const { doc, lineCounter } = parsed
  const jsonError = options.json ? jsonSyntaxError(text, lineCounter) : null
  if (jsonError) return new YamlSource(text, null, [jsonError], parsed)
  // One mistake often makes the parser report several errors after it: only the first is the author's.
  const first = doc.errors[0]
  if (first) return new YamlSource(text, null, [yamlSyntaxError(text, first, lineCounter)], parsed)
  try {
    return new YamlSource(text, doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), [], parsed)
  } catch (error) {
    // An alias bomb ("billion laughs") or another document yaml refuses to expand: a problem of
    // this file only, never an exception that stops `serve` or `validate`.
    return new YamlSource(text, null, [aliasError(doc, lineCounter, error)], parsed)
  }
}

/** Aliases one document may expand to in total (yaml's count); far above any real flow file. */
export const MAX_ALIAS_COUNT = 1000

function aliasError(doc: Document, lineCounter: LineCounter, error: unknown): { pos: Position; message: string } {
  let offset = 0
  visit(doc, {
    Alias(_key, node) {
      offset = node.range?.[0] ?? 0
      return visit.BREAK
    },
  })
  const reason = error instanceof Error ? error.message : String(error)
  return {
    pos: positionFromCounter(lineCounter, offset),
    message: `YAML aliases expand too much (${reason}); a flow file may expand at most ${MAX_ALIAS_COUNT} aliases, so write the values out or use fewer nested aliases`,
  }
}

function yamlSyntaxError(text: string, error: YAMLError, lineCounter: LineCounter): { pos: Position; message: string } {
  // A flow map or list left open is reported where the parser gave up (often lines later): point at its opening bracket.
  const unclosed = /end with an? ([}\]])/.exec(error.message)
  if (unclosed) {
    const opener = unclosedOpener(text, error.pos[0], unclosed[1] === '}' ? '{' : '[')
    if (opener !== null) {
      return {
        pos: positionFromCounter(lineCounter, opener),
        message: `YAML syntax error: this "${text[opener]}" is never closed; add "${unclosed[1]}" where it should end`,
      }
    }
  }
  const { line, column, message } = yamlErrorAt(error)
  return { pos: { line, column }, message: `YAML syntax error: ${message}` }
}

/** Offset of the innermost `{` or `[` still open at `end` (quotes and comments skipped), or null. */
function unclosedOpener(text: string, end: number, kind: '{' | '['): number | null {
  const open: number[] = []
  let quote: string | null = null
  for (let i = 0; i < end && i < text.length; i++) {
    const c = text[i]!
    if (quote) {
      if (c === '\\' && quote === '"') i++
      else if (c === quote) quote = null
      continue
    }
    if (c === '"' || c === "'") quote = c
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) while (i < end && text[i] !== '\n') i++
    else if (c === '{' || c === '[') open.push(i)
    else if (c === '}' || c === ']') open.pop()
  }
  for (let j = open.length - 1; j >= 0; j--) if (text[open[j]!] === kind) return open[j]!
  return null
}

function jsonSyntaxError(text: string, lineCounter: LineCounter): { pos: Position; message: string } | null {
  try {
    JSON.parse(text)
    return null
  } catch (error) {
    const message = (error as Error).message
    const offset = /at position (\d+)/.exec(message)?.[1]
    const pos = positionFromCounter(lineCounter, offset === undefined ? text.length : Number(offset))
    const said = message.replace(/ in JSON at position \d+.*$/s, '').replace(/^Unexpected end of JSON input$/, 'the file ends too early')
    return { pos, message: `JSON syntax error: ${said}` }
  }
}

function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key)
}

/**
 * The position of the YAML node at `path` (map keys and sequence indexes). With `key`, the position
 * of the last segment's key instead of its value. Falls back to the deepest node found.
 */
export function positionAt(source: YamlSource, path: SourcePath, options: PositionOptions = {}): Position {
  const known = source.knownOffset(path, options)
  if (known !== undefined) return positionInText(source.text, known)
  let node: unknown = source.doc.contents
  let offset = nodeStart(node) ?? 0
  for (const [index, segment] of path.entries()) {
    const last = index === path.length - 1
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && keyText(item.key) === String(segment))
      if (!pair) break
      const keyStart = nodeStart(pair.key)
      if (last && options.key && keyStart !== undefined) {
        offset = keyStart
        break
      }
      node = pair.value
      offset = nodeStart(pair.value) ?? keyStart ?? offset
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)]
      if (item === undefined) break
      node = item
      offset = nodeStart(item) ?? offset
    } else {
      break
    }
  }
  if (options.within !== undefined) offset = offsetWithin(source, node, offset, options.within)
  return positionFromCounter(source.lineCounter, offset)
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

  error(path: SourcePath, message: string, options: PositionOptions = {}): void {
    this.at(this.position(path, options), message, 'error')
  }

  warning(path: SourcePath, message: string, options: { key?: boolean } = {}): void {
    this.at(this.position(path, options), message, 'warning')
  }

  get hasErrors(): boolean {
    return this.problems.some((p) => p.severity === 'error')
  }

  private position(path: SourcePath, options: PositionOptions): Position {
    return this.source ? positionAt(this.source, path, options) : { line: 1, column: 1 }
  }
}

export function sortProblems(problems: Problem[]): Problem[] {
  return [...problems].sort((a, b) => compareText(a.file, b.file) || a.line - b.line || a.column - b.column)
}
