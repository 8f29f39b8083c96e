// The run panel: runs the saved flow as the flow page's run form does (same endpoint, same fields:
// path.*, query.*, headers.*, body) and shows the answer; the App draws the trace's path on the canvas.
import { useState } from 'react'
import { runFlow, type RunAnswer } from './api.js'
import type { Graph } from './document.js'

interface Inputs {
  path: string[]
  query: string[]
  headers: string[]
}

function inputsOf(graph: Graph | null): Inputs {
  const start = graph?.nodes.find((n) => n.type === 'start')
  const inputs = (start?.settings.inputs ?? {}) as Record<string, { properties?: Record<string, unknown> }>
  const names = (location: string) => Object.keys(inputs[location]?.properties ?? {})
  return { path: names('path'), query: names('query'), headers: names('headers') }
}

export function RunPanel({
  projectId,
  slug,
  graph,
  dirty,
  onAnswer,
}: {
  projectId: string
  slug: string | null
  graph: Graph | null
  dirty: boolean
  onAnswer(answer: RunAnswer | null): void
}) {
  const [fields, setFields] = useState<Record<string, string>>({ body: '{}' })
  const [answer, setAnswer] = useState<RunAnswer | null>(null)
  const [running, setRunning] = useState(false)
  const inputs = inputsOf(graph)
  if (!slug) return <p className="hint">Save the new flow to run it.</p>

  async function run() {
    setRunning(true)
    try {
      const result = await runFlow(projectId, slug!, fields)
      setAnswer(result)
      onAnswer(result)
    } finally {
      setRunning(false)
    }
  }

  return (
    <div className="run-panel">
      {dirty ? <p className="hint">Runs the saved version: save first to run your changes.</p> : null}
      {(['path', 'query', 'headers'] as const).flatMap((location) =>
        inputs[location].map((name) => (
          <div className="field" key={`${location}.${name}`}>
            <label htmlFor={`run-${location}-${name}`}>
              {name} <span className="hint">{location}</span>
            </label>
            <input
              id={`run-${location}-${name}`}
              type="text"
              value={fields[`${location}.${name}`] ?? ''}
              onChange={(e) => setFields({ ...fields, [`${location}.${name}`]: e.target.value })}
            />
          </div>
        )),
      )}
      <div className="field">
        <label htmlFor="run-body">
          body <span className="hint">JSON</span>
        </label>
        <textarea id="run-body" spellCheck={false} rows={4} value={fields.body} onChange={(e) => setFields({ ...fields, body: e.target.value })} />
      </div>
      <button type="button" id="run-button" disabled={running} onClick={() => void run()}>
        {running ? 'Running…' : 'Run flow'}
      </button>
      {answer ? (
        <div className="run-answer" aria-live="polite">
          <p>
            <span className={`badge ${answer.status < 400 ? 'ok' : 'bad'}`} id="run-status">
              HTTP {answer.status}
            </span>{' '}
            {answer.runId ? <a href={`/runs/${encodeURIComponent(projectId)}/${encodeURIComponent(answer.runId)}`}>run {answer.runId}</a> : null}
          </p>
          {answer.errors?.length ? (
            <ul className="problems">
              {answer.errors.map((e) => (
                <li key={e}>{e}</li>
              ))}
            </ul>
          ) : null}
          {answer.body !== undefined && answer.body !== null ? <pre id="run-body-answer">{JSON.stringify(answer.body, null, 2)}</pre> : null}
          {answer.trace ? (
            <ol className="steps">
              {answer.trace.steps.map((step, i) => (
                <li key={i} className={step.nodeId === answer.failedNodeId ? 'failed' : ''}>
                  {step.name} <code>{step.type}</code>
                  {step.port ? ` → ${step.port}` : ''} <span className="hint">{step.durationMs} ms</span>
                </li>
              ))}
            </ol>
          ) : null}
        </div>
      ) : null}
    </div>
  )
}
