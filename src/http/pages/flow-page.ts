// `/flows/<projectId>/<slug>`: the flow's graph, route, schedule and last runs, and a form generated
// from the Start's input schemas (a field per path, query and header input, a JSON editor for the
// body) that runs the flow and shows the answer and the trace.
import type { Flow, JsonSchema, Project } from '../../model/project.js'
import { runPath } from '../../openapi/generate.js'
import type { RunRecord } from '../../model/store.js'
import { html, type SafeHtml } from '../html.js'
import { renderFlowGraph } from './graph-svg.js'
import { pageResponse } from './layout.js'
import { runsTable } from './runs-table.js'
import type { FormRunAnswer } from './form-run.js'
import { renderSteps } from './run-page.js'
import { isRecord } from '../../internal/is-record.js'

export interface FlowPageData {
  project: Project
  flow: Flow
  runs: RunRecord[]
  /** The caller may run the flow (loopback, editor, owner). */
  canRun: boolean
  /** The caller may edit the flow file in the browser editor (loopback, editor, owner). */
  canEdit: boolean
  /** What the form sent last, to fill it again after a run without JavaScript. */
  sent?: Record<string, string>
  answer?: FormRunAnswer
}

export function renderFlowPage(data: FlowPageData, status = 200): Response {
  const { project, flow } = data
  const projectId = project.settings.projectId
  const start = flow.start
  const body = html`<p class="meta"><a href="/">Dashboard</a> › ${project.settings.name}</p>
<h1>${flow.name}</h1>
${flow.description ? html`<p>${flow.description}</p>` : ''}
<div id="reload-banner" class="banner" hidden data-live><span></span><a href="">Refresh the page</a> (what you typed in the form is lost).</div>
<section>
<dl class="facts">
<dt>Route</dt><dd>${start && !start.http ? html`<span class="muted">none: <code>http: false</code> (runs from schedules and <code>flowctl run</code>)</span>` : start ? html`<code>${start.method.toUpperCase()} ${runPath(projectId, flow, start)}</code>${start.auth ? html` <span class="muted">(${start.auth.type} auth)</span>` : html` <span class="muted">(no auth)</span>`}` : html`<span class="muted">no Start node: not callable over HTTP</span>`}</dd>
<dt>Schedule</dt><dd>${flow.schedule ? html`<code>${flow.schedule.cron}</code> ${flow.schedule.timezone}${flow.schedule.enabled ? '' : ' (disabled)'}` : html`<span class="muted">none</span>`}</dd>
<dt>File</dt><dd><code>${flow.file}</code>${data.canEdit ? html` · <a href="/edit/${encodeURIComponent(projectId)}/${encodeURIComponent(flow.slug)}">Edit in the browser</a>` : ''}</dd>
</dl>
<h3>Graph</h3>
<div class="graph-wrap">${renderFlowGraph(flow, { title: `Graph of flow ${flow.name}`, projectId })}</div>
</section>
${start ? runFormSection(data) : ''}
<section><h2>Last runs</h2>${runsTable(data.runs, { projectId, flow: flow.slug, showFlow: false })}</section>`
  return pageResponse(status, { title: flow.name, body })
}

function runFormSection(data: FlowPageData): SafeHtml {
  const { project, flow } = data
  const start = flow.start!
  if (!data.canRun) {
    return html`<section><h2>Run this flow</h2><p class="muted">Running from this page needs the editor or owner role on project ${project.settings.projectId}.</p></section>`
  }
  const sent = data.sent ?? {}
  const fields: SafeHtml[] = []
  for (const location of ['path', 'query', 'headers'] as const) {
    const schema = start.inputs[location]
    if (!schema) continue
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
    for (const [name, property] of Object.entries(propertiesOf(schema))) {
      const key = `${location}.${name}`
      const isRequired = location === 'path' || required.has(name)
      const hint = [
        location === 'headers' ? 'header' : location === 'path' ? 'path parameter' : 'query parameter',
        typeOf(property),
        isRequired ? 'required' : 'optional',
      ]
      const description = typeof property.description === 'string' ? property.description : ''
      const value = sent[key] ?? ''
      fields.push(html`<label for="f-${key}">${name} <span class="hint">${hint.join(', ')}${description ? ` — ${description}` : ''}</span></label>
<input type="text" id="f-${key}" name="${key}" value="${value}" placeholder="${placeholderOf(property)}"${isRequired ? html` required` : ''}>`)
    }
  }
  const bodySchema = start.inputs.body
  const bodyText = sent.body ?? (bodySchema ? JSON.stringify(skeletonOf(bodySchema), null, 2) : '')
  const bodyField =
    bodySchema || start.method !== 'get'
      ? html`<label for="body-editor">Body <span class="hint">JSON${bodySchema ? `; ${describeBody(bodySchema)}` : ''}</span></label>
<textarea class="json" id="body-editor" name="body" spellcheck="false">${bodyText}</textarea><span id="body-state" class="json-state"></span>`
      : ''
  const action = `/flows/${encodeURIComponent(project.settings.projectId)}/${encodeURIComponent(flow.slug)}`
  return html`<section><h2>Run this flow</h2>
<p class="muted">Runs the flow through the same engine as the Run API, without the Start's auth check, and records the run in history like any other.</p>
<div class="two"><form class="run-form" id="run-form" method="post" action="${action}">
${fields}
${bodyField}
${fields.length === 0 && !bodyField ? html`<p class="muted">This flow takes no inputs.</p>` : ''}
<p><button type="submit">Run flow</button></p>
</form>
<div id="run-result" aria-live="polite"${data.answer ? '' : html` hidden`}>${data.answer ? answerHtml(data.answer) : ''}</div></div>
</section>`
}

function answerHtml(answer: FormRunAnswer): SafeHtml {
  const ok = answer.status < 400
  return html`<h3>Answer</h3><p><span class="badge ${ok ? 'ok' : 'bad'}">HTTP ${answer.status}</span>${answer.runId ? html` run <a href="/runs/${encodeURIComponent(answer.projectId)}/${encodeURIComponent(answer.runId)}"><code>${answer.runId}</code></a>` : ''}</p>
${answer.errors?.length ? html`<ul class="problems">${answer.errors.map((e) => html`<li>${e}</li>`)}</ul>` : ''}
${answer.body !== undefined && answer.body !== null ? html`<pre>${JSON.stringify(answer.body, null, 2)}</pre>` : ''}
${answer.trace ? html`<h3>Trace (${answer.trace.durationMs} ms)</h3>${renderSteps(answer.trace.steps, answer.failedNodeId ?? null, answer.projectId)}` : ''}`
}

function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  const properties = schema.properties
  return isRecord(properties) ? (properties as Record<string, JsonSchema>) : {}
}

function typeOf(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`
  const type = schema.type
  return Array.isArray(type) ? type.join(' or ') : typeof type === 'string' ? type : 'any'
}

function placeholderOf(schema: JsonSchema): string {
  if (schema.default !== undefined) return `default ${JSON.stringify(schema.default)}`
  if (schema.example !== undefined) return `e.g. ${String(schema.example)}`
  return typeOf(schema)
}

function describeBody(schema: JsonSchema): string {
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : []
  return required.length ? `required: ${required.join(', ')}` : 'no required fields'
}

/** A starting body: each property with its example, default, first enum value or an empty value of its type. */
function skeletonOf(schema: JsonSchema, depth = 0): unknown {
  if (schema.example !== undefined) return schema.example
  if (schema.default !== undefined) return schema.default
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0]
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'object': {
      if (depth > 4) return {}
      const out: Record<string, unknown> = {}
      for (const [name, property] of Object.entries(propertiesOf(schema))) out[name] = skeletonOf(property, depth + 1)
      return out
    }
    case 'array':
      return []
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0
    case 'boolean':
      return false
    case 'string':
      return ''
    default:
      return null
  }
}
