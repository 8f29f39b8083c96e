// The editor page: one document (the flow file's text) shown as code or as a canvas, a node's form
// and references beside the canvas, problems from the server's debounced check, Save (PUT text
// after code edits, PUT flow after canvas edits only; POST for a new flow) and the run panel.
import { ReactFlowProvider } from '@xyflow/react'
import { lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react'
import { checkText, createFlow, saveFlow, type FlowFile, type JsonSchema, type NodeKindInfo, type Problem, type RunAnswer } from './api.js'
import { Canvas, type RunPath } from './canvas.js'
import {
  addNode,
  connect,
  disconnect,
  flowOf,
  freshId,
  freshName,
  nodesAtLines,
  readGraph,
  removeNode,
  setNodeKey,
  type Graph,
  type GraphNode,
} from './document.js'
import { Palette } from './palette.js'
import { ReferencePicker } from './references.js'
import { RunPanel } from './run-panel.js'
import { SettingsForm, type InsertTarget } from './settings-form.js'

const CHECK_DELAY_MS = 350

// The code view (CodeMirror, the flow schema, its completion and hover) is its own chunk, loaded the
// first time the view is opened: the canvas, shown first, does not wait for it.
const CodeView = lazy(() => import('./code-view.js').then((module) => ({ default: module.CodeView })))

export interface AppProps {
  projectId: string
  /** null: a new flow, created on the first save. */
  slug: string | null
  kinds: NodeKindInfo[]
  defs: Record<string, JsonSchema>
  file: FlowFile
}

type Notice = { kind: 'ok' | 'bad' | 'warn'; text: string } | null

/** The flow's slug as the server makes it from its name (accents stripped, runs of others → `-`). */
function slugify(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}

/** The run's path: the steps' nodes, and the port of each step that leads to the next one. */
function pathOf(answer: RunAnswer, graph: Graph | null): RunPath | null {
  const steps = answer.trace?.steps
  if (!steps) return null
  const edges = new Set<string>()
  steps.forEach((step, i) => {
    const node = graph?.nodes.find((n) => n.id === step.nodeId)
    const following = steps[i + 1]
    const port = step.port ?? Object.entries(node?.next ?? {}).find(([, target]) => target === following?.nodeId)?.[0]
    if (port && following) edges.add(`${step.nodeId}->${port}`)
  })
  return { nodes: new Set(steps.map((s) => s.nodeId)), edges, failed: answer.failedNodeId ?? null }
}

export function App({ projectId, slug, kinds, defs, file }: AppProps) {
  const [text, setText] = useState(file.text)
  const [saved, setSaved] = useState({ version: file.version, text: file.text })
  const [codeEdited, setCodeEdited] = useState(false)
  const [view, setView] = useState<'canvas' | 'code'>('canvas')
  const [codeOpened, setCodeOpened] = useState(false)
  if (view === 'code' && !codeOpened) setCodeOpened(true)
  const [checked, setChecked] = useState<{ text: string; problems: Problem[]; ports: Record<string, string[]> }>({
    text: file.text,
    problems: file.problems,
    ports: {},
  })
  const [selected, setSelected] = useState<string | null>(null)
  const [runPath, setRunPath] = useState<RunPath | null>(null)
  const [notice, setNotice] = useState<Notice>(null)
  const [conflict, setConflict] = useState<FlowFile | null>(null)
  const insertTarget = useRef<InsertTarget | null>(null)
  const kindsByType = useMemo(() => new Map(kinds.map((k) => [k.type, k])), [kinds])

  // The last text that parsed keeps the canvas drawn while the code is mid-edit.
  const parsed = useMemo(() => readGraph(text), [text])
  const lastGraph = useRef<Graph | null>(parsed)
  if (parsed) lastGraph.current = parsed
  const graph = parsed ?? lastGraph.current
  const dirty = text !== saved.text

  useEffect(() => void performance.mark('editor-rendered'), [])

  // The server's problems (and each node's ports), a moment after typing stops.
  useEffect(() => {
    const abort = new AbortController()
    const timer = setTimeout(() => {
      checkText(projectId, slug ?? 'new-flow', text, abort.signal)
        .then((answer) => setChecked({ text, problems: answer.problems, ports: answer.ports }))
        .catch(() => {})
    }, CHECK_DELAY_MS)
    return () => {
      clearTimeout(timer)
      abort.abort()
    }
  }, [text, projectId, slug])

  /** The kind's ports for the node's settings, and any port its `next` names beside them (a typo, an unknown kind): every edge written is drawn. */
  function portsOf(node: GraphNode): string[] {
    const known = checked.ports[node.id] ?? kindsByType.get(node.type)?.ports ?? []
    return [...new Set([...known, ...Object.keys(node.next)])]
  }

  function editCanvas(change: (text: string) => string) {
    setText((current) => change(current))
    setRunPath(null)
  }

  function onAdd(kind: NodeKindInfo) {
    const id = freshId(graph, kind.type)
    editCanvas((current) => addNode(current, { id, type: kind.type, name: freshName(readGraph(current) ?? graph, kind.type) }))
    setSelected(id)
  }

  async function save() {
    setNotice({ kind: 'warn', text: 'Saving…' })
    if (!slug) return create()
    // Code edits send the text as typed; canvas edits alone send the flow, which the server merges
    // into the file (comments and layout of what did not change stay).
    const body = codeEdited ? { baseVersion: saved.version, text } : { baseVersion: saved.version, flow: flowOf(text) }
    const answer = await saveFlow(projectId, slug, body)
    if (answer.kind === 'conflict') {
      setConflict(answer.file)
      return setNotice({ kind: 'bad', text: `Not saved: ${answer.message}. Load the file from disk, or keep your version and save over it.` })
    }
    if (answer.kind === 'refused') return setNotice({ kind: 'bad', text: `Not saved (HTTP ${answer.status}): ${answer.errors.join('; ')}` })
    const written = answer.file
    setSaved({ version: written.version, text: written.text })
    setText(written.text)
    setCodeEdited(false)
    setConflict(null)
    setChecked({ text: written.text, problems: written.problems, ports: checked.ports })
    const errors = written.problems.filter((p) => p.severity !== 'warning').length
    setNotice(
      errors
        ? { kind: 'warn', text: `Saved with ${errors} problem${errors === 1 ? '' : 's'}: the server keeps serving the last good version.` }
        : { kind: 'ok', text: 'Saved.' },
    )
  }

  async function create() {
    const newSlug = slugify(graph?.name ?? '')
    if (!newSlug) return setNotice({ kind: 'bad', text: 'Give the flow a name first: its slug comes from it.' })
    const answer = await createFlow(projectId, newSlug, flowOf(text))
    if (!answer.ok) return setNotice({ kind: 'bad', text: `Not created (HTTP ${answer.status}): ${answer.errors.join('; ')}` })
    window.location.assign(`/edit/${encodeURIComponent(projectId)}/${encodeURIComponent(newSlug)}`)
  }

  function takeDisk() {
    if (!conflict) return
    setSaved({ version: conflict.version, text: conflict.text })
    setText(conflict.text)
    setCodeEdited(false)
    setConflict(null)
    setNotice({ kind: 'ok', text: 'Loaded the file from disk.' })
  }

  function keepMine() {
    if (!conflict) return
    setSaved({ version: conflict.version, text: saved.text })
    setConflict(null)
    setNotice({ kind: 'warn', text: 'Your version is kept: Save writes it over the file on disk.' })
  }

  const selectedNode = graph?.nodes.find((n) => n.id === selected) ?? null
  const problems = checked.text === text ? checked.problems : []
  const problemNodes = useMemo(
    () =>
      nodesAtLines(
        checked.text,
        checked.problems.filter((p) => p.severity !== 'warning').map((p) => p.line),
      ),
    [checked],
  )
  const errorCount = problems.filter((p) => p.severity !== 'warning').length

  return (
    <div className={`editor view-${view}`}>
      <header className="bar">
        <a className="brand" href="/">
          flowctl
        </a>
        <span className="title">
          {graph?.name || 'New flow'}{' '}
          <code>
            {projectId}/{slug ?? '(new)'}
          </code>
        </span>
        <div className="tabs" role="tablist">
          <button type="button" role="tab" id="tab-canvas" aria-selected={view === 'canvas'} onClick={() => setView('canvas')}>
            Canvas
          </button>
          <button type="button" role="tab" id="tab-code" aria-selected={view === 'code'} onClick={() => setView('code')}>
            Code
          </button>
        </div>
        {slug ? <a href={`/flows/${encodeURIComponent(projectId)}/${encodeURIComponent(slug)}`}>Flow page</a> : null}
        <span id="notice" className={`notice ${notice?.kind ?? ''}`}>
          {notice?.text ?? (dirty ? 'Unsaved changes' : '')}
        </span>
        {conflict ? (
          <>
            <button type="button" className="secondary" id="take-disk" onClick={takeDisk}>
              Load from disk
            </button>
            <button type="button" className="secondary" id="keep-mine" onClick={keepMine}>
              Keep mine
            </button>
          </>
        ) : null}
        <button type="button" id="save" onClick={() => void save()} disabled={!dirty && !!slug}>
          Save
        </button>
      </header>
      <div className="panes">
        {view === 'canvas' ? <Palette kinds={kinds} onAdd={onAdd} /> : null}
        <main className="center">
          <div className="canvas-view" hidden={view !== 'canvas'}>
            {graph ? (
              <ReactFlowProvider>
                <Canvas
                  graph={graph}
                  portsOf={portsOf}
                  selected={selected}
                  path={runPath}
                  problemNodes={problemNodes}
                  onSelect={setSelected}
                  onConnect={(from, port, to) =>
                    editCanvas((t) => connect(t, from, port, to, kindsByType.get(graph.nodes.find((n) => n.id === from)?.type ?? '')?.singlePort ?? false))
                  }
                  onDisconnect={(from, port) => editCanvas((t) => disconnect(t, from, port))}
                  onRemove={(id) => {
                    editCanvas((t) => removeNode(t, id))
                    setSelected(null)
                  }}
                />
              </ReactFlowProvider>
            ) : (
              <p className="hint pad">The text is not a flow with a node list yet: fix it in the code view.</p>
            )}
          </div>
          <div className="code-wrap" hidden={view !== 'code'}>
            {codeOpened ? (
              <Suspense fallback={<p className="hint pad">Loading the code view…</p>}>
                <CodeView
                  text={text}
                  problems={checked.problems}
                  problemsFor={checked.text}
                  onChange={(next) => {
                    if (next === text) return
                    setText(next)
                    setCodeEdited(true)
                  }}
                />
              </Suspense>
            ) : null}
          </div>
        </main>
        <aside className="side">
          {view === 'canvas' && selectedNode && graph ? (
            <>
              <SettingsForm
                node={selectedNode}
                kind={kindsByType.get(selectedNode.type)}
                defs={defs}
                onChange={(key, value) => editCanvas((t) => setNodeKey(t, selectedNode.id, key, value))}
                onFocusTarget={(target) => (insertTarget.current = target)}
              />
              <ReferencePicker graph={graph} nodeId={selectedNode.id} onPick={(ref) => insertTarget.current?.insert(ref)} />
            </>
          ) : view === 'canvas' ? (
            <p className="hint">Select a node to edit its settings; drag from a port (right edge) to a node to connect them.</p>
          ) : null}
          <section className="problems-box">
            <h4>Problems {errorCount ? <span className="badge bad">{errorCount}</span> : <span className="badge ok">none</span>}</h4>
            <ul className="problems" id="problems">
              {problems.map((p, i) => (
                <li key={i} className={p.severity === 'warning' ? 'warn' : ''}>
                  <code>
                    {p.line}:{p.column}
                  </code>{' '}
                  {p.message}
                </li>
              ))}
            </ul>
          </section>
          <details className="run" open>
            <summary>Run</summary>
            <RunPanel projectId={projectId} slug={slug} graph={graph} dirty={dirty} onAnswer={(answer) => setRunPath(answer ? pathOf(answer, graph) : null)} />
          </details>
        </aside>
      </div>
    </div>
  )
}
