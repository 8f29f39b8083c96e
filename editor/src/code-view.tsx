// The code view: CodeMirror 6 over the flow file's text, with completion, hover docs and checks
// from the flow JSON Schema (codemirror-json-schema), and the server's problems (line, column,
// message) shown inline as they arrive from the debounced check.
import { autocompletion, closeBrackets, completionKeymap } from '@codemirror/autocomplete'
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands'
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language'
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint'
import { EditorState, StateEffect, type Text } from '@codemirror/state'
import { EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view'
import { yamlSchema } from 'codemirror-json-schema/yaml'
import { useEffect, useRef } from 'react'
import flowSchema from '../../schema/flow.schema.json'
import type { Problem } from './api.js'

export interface CodeViewProps {
  text: string
  problems: Problem[]
  /** The text the problems were found in: older problems are not drawn over newer text. */
  problemsFor: string
  onChange(text: string): void
}

/** A problem's line and column (1-based) as a range of the document: the rest of the word there. */
function diagnosticOf(doc: Text, problem: Problem): Diagnostic {
  const line = doc.line(Math.min(Math.max(problem.line, 1), doc.lines))
  const from = Math.min(line.from + Math.max(problem.column - 1, 0), line.to)
  const rest = /^\S*/.exec(line.text.slice(from - line.from))?.[0].length ?? 0
  return {
    from,
    to: Math.max(from + rest, Math.min(from + 1, line.to)),
    severity: problem.severity === 'warning' ? 'warning' : 'error',
    message: problem.message,
    source: 'flowctl',
  }
}

/** Dispatched when the server's problems arrive: the linter below runs again. */
const problemsArrived = StateEffect.define<null>()

export function CodeView({ text, problems, problemsFor, onChange }: CodeViewProps) {
  const host = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView | null>(null)
  const changed = useRef(onChange)
  changed.current = onChange
  const server = useRef({ problems, problemsFor })
  server.current = { problems, problemsFor }

  useEffect(() => {
    const editor = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: text,
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          highlightActiveLine(),
          history(),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          autocompletion(),
          syntaxHighlighting(defaultHighlightStyle),
          lintGutter(),
          keymap.of([...defaultKeymap, ...historyKeymap, ...completionKeymap, indentWithTab]),
          yamlSchema(flowSchema as never),
          // The server's problems as a second lint source beside the schema's (lint merges them).
          linter(
            (editor) => {
              const { problems: found, problemsFor: checked } = server.current
              if (checked !== editor.state.doc.toString()) return []
              return found.map((p) => diagnosticOf(editor.state.doc, p))
            },
            { delay: 50, needsRefresh: (update) => update.transactions.some((t) => t.effects.some((e) => e.is(problemsArrived))) },
          ),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) changed.current(update.state.doc.toString())
          }),
        ],
      }),
    })
    view.current = editor
    return () => editor.destroy()
    // The editor is made once; later text arrives through the effect below.
  }, [])

  // Text changed elsewhere (the canvas, a reload after a conflict): replace the document.
  useEffect(() => {
    const editor = view.current
    if (editor && editor.state.doc.toString() !== text) editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } })
  }, [text])

  useEffect(() => {
    const editor = view.current
    if (editor && problemsFor === editor.state.doc.toString()) editor.dispatch({ effects: problemsArrived.of(null) })
  }, [problems, problemsFor])

  return <div className="code-view" ref={host} />
}
