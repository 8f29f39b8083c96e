// A flow file's new text from the flow as data (the editor's canvas sends the whole flow as
// JSON): the difference is applied to the file's YAML Document and only the lines it changed are
// written (merge-lines.ts), so comments, key order, quoting and blank lines of everything else
// stay as they were. A `.json` flow file stays JSON, in the indentation it had.
import { extname } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { Document, parseDocument, type ToStringOptions } from 'yaml'
import { parseYamlSource } from '../yaml-source.js'
import { mergeEdit } from './merge-lines.js'
import { patchDocument } from './patch-document.js'

export interface TextEditOptions {
  /** New node id → old id, for nodes renamed by this edit (they keep their comments). */
  previousIds?: ReadonlyMap<string, string>
}

function isJsonFile(file: string): boolean {
  return extname(file).toLowerCase() === '.json'
}

/** The problems of the text as YAML (or JSON for a `.json` file): empty when it can be read at all. */
export function syntaxProblems(file: string, text: string): { line: number; column: number; message: string }[] {
  return parseYamlSource(text, { json: isJsonFile(file) }).syntaxErrors.map(({ pos, message }) => ({ ...pos, message }))
}

/** The file's data, or null when the text cannot be read (a syntax error, an alias bomb). */
export function flowDataOf(file: string, text: string): unknown {
  const source = parseYamlSource(text, { json: isJsonFile(file) })
  return source.syntaxErrors.length > 0 ? null : (source.data ?? null)
}

/** `written` changed to hold `flow`; a text that cannot be read as it is gets `flow` written anew. */
export function editFlowText(file: string, written: string, flow: unknown, options: TextEditOptions = {}): string {
  const json = isJsonFile(file)
  const doc = parseDocument(written)
  if (doc.errors.length > 0 || (json && syntaxProblems(file, written).length > 0)) return renderFlowText(file, flow)
  const layout = json ? null : layoutOf(written)
  const indent = json ? jsonIndentOf(written) : ''
  const render = () => (layout ? renderYaml(doc, layout) : `${JSON.stringify(doc.toJS(), null, indent)}\n`)
  const base = render()
  patchDocument(doc, flow, { previousIds: options.previousIds })
  const edited = render()
  const merged = mergeEdit(written, base, edited)
  // The merge keeps the file's layout; should it ever read back as anything but the flow sent,
  // the edited Document is written as yaml renders it instead (correct first, minimal second).
  return merged !== null && isDeepStrictEqual(flowDataOf(file, merged), doc.toJS({ maxAliasCount: 1000 })) ? merged : edited
}

/** A new flow file's text. */
export function renderFlowText(file: string, flow: unknown): string {
  if (isJsonFile(file)) return `${JSON.stringify(flow, null, 2)}\n`
  return new Document(flow).toString({ lineWidth: 0 })
}

interface Layout {
  options: ToStringOptions
  /** Whether the file writes `{ a: 1 }` (else `{a: 1}`), and `[ a ]` (else `[a]`). */
  padded: { map: boolean; seq: boolean }
}

/** yaml's rendering options closest to how the file is written (the merge absorbs the rest). */
function layoutOf(text: string): Layout {
  const count = (pattern: RegExp) => text.match(pattern)?.length ?? 0
  return {
    options: {
      lineWidth: 0,
      minContentWidth: 0,
      indent: indentOf(text),
      // `key:` followed by `- item` at the key's own indentation.
      indentSeq: !/^( *)[^\s#-][^\n]*:[ \t]*(#[^\n]*)?\r?\n\1- /m.test(text),
    },
    // `{{` and `${` open templates, not maps.
    padded: {
      map: count(/(?<![{$])\{ (?!\{)/g) >= count(/(?<![{$])\{[^\s{}]/g),
      seq: count(/\[ /g) >= count(/\[[^\s\]]/g),
    },
  }
}

/**
 * yaml pads maps and lists alike (`flowCollectionPadding`); a file that pads one and not the other
 * is rendered both ways and each padding space kept where the file's style for its bracket wants it.
 */
function renderYaml(doc: Document, layout: Layout): string {
  const { map, seq } = layout.padded
  if (map === seq) return doc.toString({ ...layout.options, flowCollectionPadding: map })
  const padded = doc.toString({ ...layout.options, flowCollectionPadding: true }).split('\n')
  const tight = doc.toString({ ...layout.options, flowCollectionPadding: false }).split('\n')
  if (padded.length !== tight.length) return padded.join('\n')
  return padded.map((line, i) => mixPadding(line, tight[i]!, layout.padded)).join('\n')
}

/** `padded` without the padding spaces `tight` lacks where the bracket's style says no padding. */
function mixPadding(padded: string, tight: string, want: { map: boolean; seq: boolean }): string {
  let out = ''
  let j = 0
  for (let i = 0; i < padded.length; i++) {
    const c = padded[i]!
    if (c === tight[j]) {
      out += c
      j++
    } else if (c === ' ') {
      // A padding space follows an opening bracket or precedes a closing one.
      const seq = padded[i - 1] === '[' || padded[i + 1] === ']'
      if (want[seq ? 'seq' : 'map']) out += c
    } else {
      return padded
    }
  }
  return j === tight.length ? out : padded
}

/** The smallest step by which a line is indented more than the line before it (2 when none). */
function indentOf(text: string): number {
  let step = Infinity
  let previous = -1
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trimStart()
    if (trimmed === '' || trimmed.startsWith('#')) continue
    const depth = line.length - trimmed.length
    if (previous >= 0 && depth > previous) step = Math.min(step, depth - previous)
    previous = depth + (trimmed.startsWith('- ') ? 2 : 0)
  }
  return Number.isFinite(step) && step <= 8 ? step : 2
}

function jsonIndentOf(text: string): string {
  return /\n([ \t]+)\S/.exec(text)?.[1] ?? '  '
}
