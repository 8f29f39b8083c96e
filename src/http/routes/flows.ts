// The flows API (SPEC §24 "The file stays the source"): read a flow file with its version, flow
// and problems; write it from text or from the flow as data (only the lines that changed are
// written, src/project/flow-edit/); create and delete flow files. For a loopback caller (§17's Host
// rules) or a signed-in editor or owner; deleting needs an owner; writes are same-origin only.
// `serve`'s file watcher reloads what is written, as it reloads any change.
import type { IncomingMessage } from 'node:http'
import { mkdir } from 'node:fs/promises'
import { getRouterParam, type H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { Problem, Project } from '../../model/project.js'
import { problemsWithText } from '../../project/load.js'
import { editFlowText, flowDataOf, renderFlowText, syntaxProblems } from '../../project/flow-edit/edit-text.js'
import {
  findFlowFile,
  flowsFolderOf,
  isSlug,
  newFlowFileRef,
  readFlowText,
  removeFlowFile,
  slugFileExists,
  slugOfText,
  textVersion,
  withFileLock,
  writeFlowFile,
  type FlowFileRef,
} from '../../project/flow-edit/flow-files.js'
import { applyRenames, RenameError, type NodeRename } from '../../project/flow-edit/rename.js'
import { slugify } from '../../project/slug.js'
import { roleAllows } from '../../users/types.js'
import { isCrossSite, requireAccess, type Caller } from '../access.js'
import { BODY_ERROR_CODES, readJsonBody } from '../body.js'
import type { AppContext } from '../context.js'
import { jsonResponse } from '../respond.js'
import { projectRole } from '../sign-in.js'
import { isRecord } from '../../internal/is-record.js'

/** A flow file and the JSON around it; far above any hand-written flow. */
const EDIT_BODY_LIMIT = 4 * 1024 * 1024

const NO_STORE = { 'cache-control': 'no-store' }

/** `GET /api/flows/<projectId>/<slug>` → `{ version, text, flow, problems }`. */
export function flowReadHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const { project } = await editAccess(context, event, 'editor')
    const ref = await flowFileOf(project, event)
    const text = await readFlowText(ref.path)
    if (text === null) throw httpError('FLOW_NOT_FOUND')
    const body = { version: textVersion(text), text, flow: flowDataOf(ref.file, text), problems: await problemsOf(project, ref.file, text) }
    return jsonResponse(200, body, NO_STORE)
  }
}

/** `PUT /api/flows/<projectId>/<slug>` `{ baseVersion, text }` or `{ baseVersion, flow[, rename] }` → `{ version, text, problems }`. */
export function flowWriteHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const { project, caller } = await editAccess(context, event, 'editor')
    const ref = await flowFileOf(project, event)
    const request = readWrite(await readBody(event))
    return withFileLock(ref.path, async () => {
      const current = await readFlowText(ref.path)
      if (current === null) throw httpError('FLOW_NOT_FOUND')
      const version = textVersion(current)
      if (request.baseVersion !== version) throw httpError('FLOW_CHANGED', undefined, { fields: { version, text: current } })
      const text = request.kind === 'text' ? checkedText(ref.file, request.text) : editedText(ref.file, current, request.flow, request.renames)
      if (text !== current) {
        await writeFlowFile(ref.path, text)
        logWrite(context, 'wrote', project, ref, caller, textVersion(text))
      }
      return jsonResponse(200, { version: textVersion(text), text, problems: await problemsOf(project, ref.file, text) }, NO_STORE)
    })
  }
}

/** `POST /api/flows/<projectId>` `{ slug, flow }` (or `{ slug, text }`) → 201 `{ slug, version, text, problems }`; 409 when the slug is taken. */
export function flowCreateHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const { project, caller } = await editAccess(context, event, 'editor')
    const body = asRecord(await readBody(event))
    const slug = body.slug
    if (typeof slug !== 'string' || !isSlug(slug))
      throw httpError('INPUT_INVALID', ['slug: must be a slug: lower-case letters and digits joined by single hyphens, like create-order'])
    const ref = newFlowFileRef(project, slug)
    const text = newFlowText(ref, slug, body)
    const taken = () => httpError('CONFLICT', [`a flow with the slug "${slug}" already exists`])
    if ((await slugFileExists(project, slug)) || (await findFlowFile(project, slug))) throw taken()
    await mkdir(flowsFolderOf(project), { recursive: true })
    await withFileLock(ref.path, () => writeFlowFile(ref.path, text, { exclusive: true })).catch((error: unknown) => {
      throw (error as NodeJS.ErrnoException).code === 'EEXIST' ? taken() : error
    })
    const version = textVersion(text)
    logWrite(context, 'created', project, ref, caller, version)
    return jsonResponse(201, { slug, version, text, problems: await problemsOf(project, ref.file, text) }, NO_STORE)
  }
}

/** `DELETE /api/flows/<projectId>/<slug>[?baseVersion=]` → `{ ok: true }`, for an owner. */
export function flowDeleteHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const { project, caller } = await editAccess(context, event, 'owner')
    const ref = await flowFileOf(project, event)
    const baseVersion = event.url.searchParams.get('baseVersion')
    await withFileLock(ref.path, async () => {
      const current = await readFlowText(ref.path)
      if (current === null) throw httpError('FLOW_NOT_FOUND')
      const version = textVersion(current)
      if (baseVersion !== null && baseVersion !== version) throw httpError('FLOW_CHANGED', undefined, { fields: { version, text: current } })
      await removeFlowFile(ref.path)
      logWrite(context, 'deleted', project, ref, caller, version)
    })
    return jsonResponse(200, { ok: true }, NO_STORE)
  }
}

/** `POST /api/flows/<projectId>/<slug>/check` `{ text }` → `{ problems }`: what a save would report, nothing written. */
export function flowCheckHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const { project } = await editAccess(context, event, 'editor')
    const slug = getRouterParam(event, 'slug') ?? ''
    if (!isSlug(slug)) throw httpError('FLOW_NOT_FOUND')
    const text = asRecord(await readBody(event)).text
    if (typeof text !== 'string') throw httpError('INPUT_INVALID', ['text: must be the flow file as text'])
    const ref = (await findFlowFile(project, slug)) ?? newFlowFileRef(project, slug)
    return jsonResponse(200, { problems: await problemsOf(project, ref.file, text) }, NO_STORE)
  }
}

/**
 * Loopback (with a loopback Host) or a signed-in editor or owner (401 → 404 → 403, as the other
 * APIs); an owner to delete; a write from another site's page (Origin or Sec-Fetch-Site) is 403.
 */
async function editAccess(context: AppContext, event: H3Event, role: 'editor' | 'owner'): Promise<{ project: Project; caller: Caller }> {
  const projectId = getRouterParam(event, 'projectId') ?? ''
  const { entry, caller } = await requireAccess(context, event, projectId, 'edit')
  if (role === 'owner' && caller.kind === 'user' && !roleAllows(projectRole(caller.user, projectId), 'owner')) {
    throw httpError('FORBIDDEN', ['deleting a flow needs the owner role'])
  }
  const method = event.req.method
  if (method !== 'GET' && method !== 'HEAD' && (isCrossSite(event) || event.req.headers.get('sec-fetch-site') === 'cross-site')) {
    throw httpError('FORBIDDEN', ['cross-site request refused'])
  }
  return { project: entry.project, caller }
}

async function flowFileOf(project: Project, event: H3Event): Promise<FlowFileRef> {
  const ref = await findFlowFile(project, getRouterParam(event, 'slug') ?? '')
  if (!ref) throw httpError('FLOW_NOT_FOUND')
  return ref
}

async function readBody(event: H3Event): Promise<unknown> {
  const read = await readJsonBody(event.req, EDIT_BODY_LIMIT, event.runtime?.node?.req as IncomingMessage | undefined)
  if (!read.ok) throw httpError(BODY_ERROR_CODES[read.status], [read.error])
  return read.body
}

function asRecord(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw httpError('INPUT_INVALID', ['body: must be a JSON object'])
  return body as Record<string, unknown>
}

type WriteRequest =
  | { kind: 'text'; baseVersion: string; text: string }
  | { kind: 'flow'; baseVersion: string; flow: Record<string, unknown>; renames: NodeRename[] }

function readWrite(value: unknown): WriteRequest {
  const body = asRecord(value)
  const { baseVersion, text, flow, rename } = body
  if (typeof baseVersion !== 'string') throw httpError('INPUT_INVALID', ['baseVersion: must be the version the edit started from'])
  if ((text === undefined) === (flow === undefined)) throw httpError('INPUT_INVALID', ['send either text (the file) or flow (the flow as JSON)'])
  if (text !== undefined) {
    if (typeof text !== 'string') throw httpError('INPUT_INVALID', ['text: must be the flow file as text'])
    if (rename !== undefined) throw httpError('INPUT_INVALID', ['rename: goes with flow, not with text'])
    return { kind: 'text', baseVersion, text }
  }
  if (flow === null || typeof flow !== 'object' || Array.isArray(flow)) throw httpError('INPUT_INVALID', ['flow: must be the flow as a JSON object'])
  return { kind: 'flow', baseVersion, flow: flow as Record<string, unknown>, renames: readRenames(rename) }
}

function readRenames(value: unknown): NodeRename[] {
  if (value === undefined) return []
  const list = Array.isArray(value) ? value : [value]
  return list.map((item) => {
    const { from, to } = (item ?? {}) as { from?: unknown; to?: unknown }
    if (typeof from !== 'string' || typeof to !== 'string' || from === '' || to === '') {
      throw httpError('INPUT_INVALID', ['rename: must be { from, to } with the old and the new node id'])
    }
    return { from, to }
  })
}

/** Text sent as it is: written when it is YAML (with or without problems), else 422 and nothing written. */
function checkedText(file: string, text: string): string {
  const syntax = syntaxProblems(file, text)
  if (syntax.length === 0) return text
  const problems: Problem[] = syntax.map((p) => ({ file, ...p, severity: 'error' }))
  throw httpError(
    'FLOW_TEXT_INVALID',
    problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`),
    { fields: { problems } },
  )
}

function editedText(file: string, current: string, flow: Record<string, unknown>, renames: NodeRename[]): string {
  try {
    const renamed = applyRenames(flowDataOf(file, current), flow, renames)
    return editFlowText(file, current, renamed.flow, { previousIds: renamed.previousIds })
  } catch (error) {
    if (error instanceof RenameError) throw httpError('INPUT_INVALID', [error.message])
    throw error
  }
}

/** A new file's text; its name must give the slug asked for (else it would be served under another). */
function newFlowText(ref: FlowFileRef, slug: string, body: Record<string, unknown>): string {
  const { flow, text } = body
  if ((text === undefined) === (flow === undefined)) throw httpError('INPUT_INVALID', ['send either flow (the flow as JSON) or text (the file)'])
  let written: string
  if (typeof text === 'string') written = checkedText(ref.file, text)
  else if (isRecord(flow)) written = renderFlowText(ref.file, flow)
  else throw httpError('INPUT_INVALID', [text !== undefined ? 'text: must be the flow file as text' : 'flow: must be the flow as a JSON object'])
  const given = slugOfText(ref.path, written)
  if (given !== slug) {
    const name = (flowDataOf(ref.file, written) as { name?: unknown } | null)?.name
    throw httpError('INPUT_INVALID', [`name: "${String(name)}" gives the slug "${slugify(String(name))}", not "${slug}"; change the name or the slug`])
  }
  return written
}

async function problemsOf(project: Project, file: string, text: string): Promise<Problem[]> {
  return problemsWithText(project, file, text)
}

function logWrite(context: AppContext, what: string, project: Project, ref: FlowFileRef, caller: Caller, version: string): void {
  const who = caller.kind === 'user' ? `user ${caller.user.name}` : 'this machine (loopback)'
  context.log(`flows API: ${what} ${project.settings.projectId} ${ref.file} by ${who}, version ${version}`, true)
}
