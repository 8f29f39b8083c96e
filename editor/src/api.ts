// The server calls of the editor: the flows API (SPEC "Editing flows in the browser"), the node
// kinds, the debounced check of the text being typed, and the run form's endpoint.

export interface Problem {
  line: number
  column: number
  message: string
  severity: 'error' | 'warning'
  file?: string
}

export interface FlowFile {
  version: string
  text: string
  problems: Problem[]
}

export interface NodeKindInfo {
  type: string
  description: string
  settingsSchema: JsonSchema
  /** The ports of a node with default settings (a switch's come from its cases). */
  ports: string[]
  singlePort: boolean
  terminates: boolean
}

export type JsonSchema = { [key: string]: unknown }

export interface KindsAnswer {
  kinds: NodeKindInfo[]
  /** Shared definitions the settings schemas point at (`#/$defs/condition`). */
  defs: Record<string, JsonSchema>
}

export type SaveAnswer =
  | { kind: 'saved'; file: FlowFile }
  | { kind: 'conflict'; message: string; file: FlowFile }
  | { kind: 'refused'; status: number; errors: string[] }

interface RunStep {
  nodeId: string
  type: string
  name: string
  port?: string | null
  durationMs: number
  output?: unknown
}

export interface RunAnswer {
  status: number
  runId: string | null
  body?: unknown
  errors?: string[]
  failedNodeId?: string | null
  trace?: { durationMs: number; steps: RunStep[] }
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' }

function flowUrl(projectId: string, slug?: string): string {
  return `/api/flows/${encodeURIComponent(projectId)}${slug === undefined ? '' : `/${encodeURIComponent(slug)}`}`
}

async function errorsOf(response: Response): Promise<string[]> {
  const body = (await response.json().catch(() => null)) as { errors?: unknown } | null
  return Array.isArray(body?.errors) ? body.errors.map(String) : [`HTTP ${response.status}`]
}

/** The page starts both reads before the bundle arrives (see routes/editor.ts); else they start here. */
function preloaded(name: 'kinds' | 'flow', url: string): Promise<Response> {
  const started = (window as { flowctlPreload?: Record<string, Promise<Response> | undefined> }).flowctlPreload?.[name]
  return started ?? fetch(url, { headers: { accept: 'application/json' } })
}

export async function loadFlow(projectId: string, slug: string): Promise<FlowFile> {
  const response = await preloaded('flow', flowUrl(projectId, slug))
  if (!response.ok) throw new Error((await errorsOf(response)).join('; '))
  return (await response.json()) as FlowFile
}

export async function loadKinds(): Promise<KindsAnswer> {
  const response = await preloaded('kinds', '/api/editor/kinds')
  if (!response.ok) throw new Error((await errorsOf(response)).join('; '))
  return (await response.json()) as KindsAnswer
}

export interface CheckAnswer {
  problems: Problem[]
  /** Each node's ports as its kind gives them for its settings (a switch's cases). */
  ports: Record<string, string[]>
}

async function postJson<T>(url: string, body: unknown, signal?: AbortSignal): Promise<T | null> {
  const response = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body), signal })
  return response.ok ? ((await response.json()) as T) : null
}

/** The problems of `text` as the server would load it (the flows API's check) and its nodes' ports; nothing written. */
export async function checkText(projectId: string, slug: string, text: string, signal?: AbortSignal): Promise<CheckAnswer> {
  const [checked, ports] = await Promise.all([
    postJson<{ problems: Problem[] }>(`${flowUrl(projectId, slug)}/check`, { text }, signal),
    postJson<{ ports: Record<string, string[]> }>('/api/editor/ports', { text }, signal),
  ])
  return { problems: checked?.problems ?? [], ports: ports?.ports ?? {} }
}

/** PUT the text (code edits) or the flow (canvas edits); a 409 carries the file as it is on disk. */
export async function saveFlow(projectId: string, slug: string, body: { baseVersion: string; text?: string; flow?: unknown }): Promise<SaveAnswer> {
  const response = await fetch(flowUrl(projectId, slug), { method: 'PUT', headers: JSON_HEADERS, body: JSON.stringify(body) })
  if (response.status === 409) {
    const answer = (await response.json()) as { errors?: string[]; version: string; text: string }
    return { kind: 'conflict', message: answer.errors?.[0] ?? 'the file changed on disk', file: { version: answer.version, text: answer.text, problems: [] } }
  }
  if (!response.ok) return { kind: 'refused', status: response.status, errors: await errorsOf(response) }
  const answer = (await response.json()) as FlowFile
  return { kind: 'saved', file: { ...answer, problems: answer.problems ?? [] } }
}

/** POST a new flow file; answers the slug's errors (409 when it exists). */
export async function createFlow(projectId: string, slug: string, flow: unknown): Promise<{ ok: true } | { ok: false; status: number; errors: string[] }> {
  const response = await fetch(flowUrl(projectId), { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ slug, flow }) })
  return response.ok ? { ok: true } : { ok: false, status: response.status, errors: await errorsOf(response) }
}

/** Runs the flow (as served) through the flow page's run form, as JSON with its trace. */
export async function runFlow(projectId: string, slug: string, fields: Record<string, string>): Promise<RunAnswer> {
  const response = await fetch(`/flows/${encodeURIComponent(projectId)}/${encodeURIComponent(slug)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(fields).toString(),
  })
  if (!response.ok) return { status: response.status, runId: null, errors: await errorsOf(response) }
  return (await response.json()) as RunAnswer
}
