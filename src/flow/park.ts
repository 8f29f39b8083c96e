// Parking a run (SPEC §22): a `wait` with `until: callback`, or a sleep longer than
// `limits.inlineWaitMs`, stops the walk with `ParkRun`; the engine commits what the run needs to go
// on — the outputs so far, the steps, the ports, the wait it stopped at — and holds nothing for it:
// no worker, connection or timer. `src/http/wait-runner.ts` claims it again when a callback
// arrives or it is due, and `resumeRun` (engine.ts) continues the walk at the wait's port.
// The stored state is masked like a stored trace: a secret's value never reaches the store, so a
// node after the wait that needs a secret writes `${secrets.X}`, which is resolved again.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Flow, FlowNode, Secrets } from '../model/project.js'
import type { RunRecord, RunTrigger } from '../model/store.js'
import type { TraceStep } from '../model/run.js'
import type { WaitKind } from '../model/waits.js'
import type { WaitStore } from '../model/store.js'
import type { RunParking } from '../model/run.js'

export type { RunParking }
import type { ValidatedInput } from './inputs.js'
import { maskValue } from './mask.js'

/** Thrown by a wait node that parks the run; the engine stops the walk and commits the run's state. */
export class ParkRun extends Error {
  override name = 'ParkRun'
  constructor(
    readonly kind: WaitKind,
    /** Epoch ms: the callback's timeout, or the sleep's end. */
    readonly dueAt: number,
    /** The called flows' walks it stopped in, outermost first (each called flow adds its own on the way out). */
    readonly frames: ParkedFrame[] = [],
  ) {
    super(kind === 'callback' ? 'the run waits for a callback' : 'the run sleeps')
  }
}

/**
 * A called flow's walk, stopped in its `call` node (or, for the innermost, at its wait). The stored
 * state's top level is the run's own flow; its `frames` are the flows it called, outermost first.
 */
export interface ParkedFrame {
  /** The called flow's slug. */
  flow: string
  /** The node its walk stopped at: a `call` node, or (the last frame) the wait. */
  nodeId: string
  /** Its node outputs by reference name. */
  scope: Record<string, unknown>
  /** Its steps so far (the calling step's sub-flow trace), or null when the run keeps none. */
  steps: TraceStep[] | null
}

/** Everything a parked run needs to go on, as stored (JSON, secrets masked). */
export interface ParkedState {
  v: 1
  /** The run's flow's slug. */
  flow: string
  /** The node the run stopped at: the wait, or (with frames) the `call` node whose flow waits. */
  nodeId: string
  /** The called flows the wait is in, outermost first; absent or empty: the wait is in the run's flow (states stored before frames). */
  frames?: ParkedFrame[]
  kind: WaitKind
  dueAt: number
  /** ISO time the run parked (a sleep's `waitedMs` counts from it). */
  parkedAt: string
  run: { id: string; startedAt: string; trigger: RunTrigger; method: string; scheduledFor: string | null; replayOf: string | null; resumedFrom?: string | null }
  /** Node outputs by reference name. */
  scope: Record<string, unknown>
  ports: RunRecord['ports']
  /** The steps so far, or null when the run keeps none (history.keep: none). */
  steps: TraceStep[] | null
  input: ValidatedInput | null
  /** Milliseconds the run was active before parking (its stretches added up). */
  activeMs: number
  /** How many times the run parked, this time included. */
  seq: number
}

/** The resume token of a run's `seq`-th park: an HMAC of project, run and seq under the project's key. */
export function resumeToken(key: string, projectId: string, runId: string, seq: number): string {
  return createHmac('sha256', key).update(`resume\0${projectId}\0${runId}\0${seq}`).digest('base64url')
}

export function tokenMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** `{{ run.resumeUrl }}` before the run's `seq`-th park. */
export function resumeUrlOf(parking: RunParking, projectId: string, runId: string, seq: number): string {
  const token = resumeToken(parking.key, projectId, runId, seq)
  return `${parking.origin}/api/resume/${encodeURIComponent(projectId)}/${encodeURIComponent(runId)}?token=${token}`
}

const callbackFlows = new WeakMap<Flow, boolean>()

/** Whether a node of the flow itself waits for a callback. */
function hasCallbackWait(flow: Flow): boolean {
  let found = callbackFlows.get(flow)
  if (found === undefined) {
    found = flow.nodes.some(isCallbackWait)
    callbackFlows.set(flow, found)
  }
  return found
}

/** Whether a run of the flow may reach a callback wait, in it or in a flow it calls (its nodes then see `run.resumeUrl`). */
export function reachesCallbackWait(flow: Flow, flows: ReadonlyMap<string, Flow>): boolean {
  return reaches(flow, flows, reachCallback, hasCallbackWait)
}

/** Flows by slug and whether they reach a kind of wait, per loaded project (a reload makes a new map). */
type Reach = WeakMap<ReadonlyMap<string, Flow>, Map<string, boolean>>
const reachCallback: Reach = new WeakMap()
const reachWait: Reach = new WeakMap()

/** Whether `own` holds for the flow or for a flow its `call` nodes reach (only `call` parks inside; see engine.ts). */
function reaches(flow: Flow, flows: ReadonlyMap<string, Flow>, cache: Reach, own: (flow: Flow) => boolean): boolean {
  let known = cache.get(flows)
  if (!known) cache.set(flows, (known = new Map()))
  const visit = (current: Flow, seen: Set<Flow>): boolean => {
    const cached = known.get(current.slug)
    if (cached !== undefined) return cached
    if (seen.has(current)) return false
    seen.add(current)
    const found =
      own(current) ||
      current.nodes.some((node) => {
        const called = node.type === 'call' && typeof node.settings.flow === 'string' ? flows.get(node.settings.flow) : undefined
        return called !== undefined && visit(called, seen)
      })
    known.set(current.slug, found)
    return found
  }
  return visit(flow, new Set())
}

function isCallbackWait(node: FlowNode): boolean {
  return node.type === 'wait' && node.settings.until === 'callback'
}

/** The state as stored: outputs, steps and input masked like a stored trace. */
export function parkedStateText(state: ParkedState, secrets: Secrets): string {
  const masked: ParkedState = {
    ...state,
    scope: maskValue(state.scope, secrets) as Record<string, unknown>,
    steps: state.steps ? (maskValue(state.steps, secrets) as TraceStep[]) : null,
    input: state.input ? (maskValue(state.input, secrets) as ValidatedInput) : null,
  }
  if (state.frames?.length)
    masked.frames = state.frames.map((frame) => ({
      ...frame,
      scope: maskValue(frame.scope, secrets) as Record<string, unknown>,
      steps: frame.steps ? (maskValue(frame.steps, secrets) as TraceStep[]) : null,
    }))
  return JSON.stringify(masked)
}

/** The wait's output and port when the run is resumed. */
export function wakeOutput(state: ParkedState, port: 'out' | 'timeout', payload: string | null, now: Date): unknown {
  if (payload !== null) return JSON.parse(payload) as unknown
  if (state.kind === 'sleep') return { waitedMs: Math.max(0, now.getTime() - Date.parse(state.parkedAt)) }
  return port === 'timeout' ? { timedOutAt: now.toISOString() } : { waitedMs: Math.max(0, now.getTime() - Date.parse(state.parkedAt)) }
}

let servingOrigin = ''

/** `serve` tells where it listens, so resume URLs made in this process are absolute. */
export function setServingOrigin(origin: string): void {
  servingOrigin = origin.replace(/\/+$/, '')
}

/** Where resume URLs point: FLOWCTL_PUBLIC_URL (behind a proxy), else where `serve` listens, else a path alone. */
function publicOrigin(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.FLOWCTL_PUBLIC_URL?.trim()
  return configured ? configured.replace(/\/+$/, '') : servingOrigin
}

const waitFlows = new WeakMap<Flow, boolean>()

/** Whether a node of the flow itself is a wait. */
function hasWait(flow: Flow): boolean {
  let found = waitFlows.get(flow)
  if (found === undefined) {
    found = flow.nodes.some((node) => node.type === 'wait')
    waitFlows.set(flow, found)
  }
  return found
}

/**
 * Whether a run of the flow may reach a wait that parks (any wait node: a long ms is known only at
 * run time), in it or in a flow it calls.
 */
export function mayPark(flow: Flow, flows: ReadonlyMap<string, Flow>): boolean {
  return reaches(flow, flows, reachWait, hasWait)
}

/** The parking of a run that may park (its store's resume key read once per project and store). */
export async function openParking(store: WaitStore, projectId: string, claims: Pick<RunParking, 'claimToken' | 'asyncClaimToken'> = {}): Promise<RunParking> {
  return { store, key: await store.resumeKey(projectId), origin: publicOrigin(), ...claims }
}

/** What the run page tells of a waiting run: how and until when, and (for callers who may run flows) its resume link. */
export interface WaitingFacts {
  kind: WaitKind
  dueAt: string
  /** The resume URL as a path (same origin as the page); null when not shown to this caller or not a callback. */
  resumeUrl: string | null
}

export async function waitingFacts(store: WaitStore, projectId: string, runId: string, showLink: boolean): Promise<WaitingFacts | null> {
  const row = await store.lookup(projectId, runId)
  if (!row || row.status === 'done') return null
  const link = showLink && row.kind === 'callback' && row.status === 'waiting'
  const resumeUrl = link ? resumeUrlOf({ store, key: await store.resumeKey(projectId), origin: '' }, projectId, runId, row.seq) : null
  return { kind: row.kind, dueAt: new Date(row.dueAt).toISOString(), resumeUrl }
}
