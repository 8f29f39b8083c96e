// The one engine every trigger calls (Run API, `flowctl run`, the scheduler): validate the inputs,
// follow ports from the Start node, record the run. Node kinds live in src/nodes/.
import { FlowctlError } from '../errors.js'
import { MAX_CALL_DEPTH } from '../nodes/call.js'
import { getNodeKind } from '../nodes/registry.js'
import { FinalFailure, RunBudgetSpent, StepFailure, type NodeContext, type NodeKind, type NodeResult, type SubFlowResult } from '../nodes/types.js'
import type { Flow, FlowNode, Project, Secrets } from '../model/project.js'
import type { DocumentsPort, RunDetailsText, RunDocument, RunRecord, Store } from '../model/store.js'
import { validateInputs } from './inputs.js'
import { keepsDetails, runDetailsText } from './run-details.js'
import { setTimeout as sleepFor } from 'node:timers/promises'
import { maskValue } from './mask.js'
import {
  createResolver,
  createScope,
  evaluateNodeExpressions,
  expressionsOf,
  resolveParts,
  templateCacheOf,
  type ExpressionValues,
  type ResolvedPart,
  type Scope,
} from '../language/resolve.js'
import { capErrorList, capReason, maskedReason } from './reason.js'
import { RunDocuments } from './run-documents.js'
import { newRunId } from '../internal/ids.js'
import { retryDelayMs, retryOf } from '../nodes/retry.js'
import { createRunStopper, RunStopped, type RunStopper } from './stopper.js'
import { RunBudget } from './run-budget.js'
import { TraceMeter } from './trace-meter.js'
import type { NodeFetch, ResumePoint, RunOptions, RunOutcome, RunSleep, Trace, TraceStep } from '../model/run.js'
import { runResponse } from './answer.js'
import { tracerFor, type TraceSpan } from '../telemetry/tracing.js'
import type { ValidatedInput } from './inputs.js'
import type { WaitKind, WakePort } from '../model/waits.js'
import { isoTime } from '../internal/iso-time.js'
import { ParkRun, parkedStateText, reachesCallbackWait, resumeUrlOf, type ParkedFrame, type ParkedState, type RunParking } from './park.js'

// Run ids are made in store/ids.ts (CSPRNG, SPEC §19); callers of the engine keep importing them here.
export { newRunId }

/** A guard against flows whose ports form a loop that never waits (the timeout could never fire). */
const MAX_STEPS = 10_000

type Ending =
  | { kind: 'response'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'failed'; nodeId: string | null; error: string }
  /** Stopped at a wait that parks the run (SPEC §22): committed, to be resumed later. */
  | { kind: 'parked'; park: ParkRun; node: FlowNode }

/** What a run's record and stored details are made of, besides its walk and ending. */
interface RunFacts {
  store: Store
  options: Pick<RunOptions, 'trace' | 'recordRun' | 'method' | 'trigger'>
  run: NodeContext['run']
  replayOf: string | null
  /** A retry from the failed step: the node it executed from (SPEC §22). */
  resumedFrom: string | null
  input: ValidatedInput | null
  /** Active milliseconds of earlier stretches (a resumed run); performance.now() when this one began. */
  priorMs: number
  began: number
  span: TraceSpan | null
}

export async function runFlow(options: RunOptions): Promise<RunOutcome> {
  const { project, flow, store } = options
  if (!flow.start) throw new FlowctlError('FLOW_NOT_FOUND', `flow "${flow.slug}" has no start node and cannot be run`)

  const checked = validateInputs(flow, options.input)
  if (!checked.ok) return { kind: 'invalid', errors: checked.errors }

  const keep = project.settings.history.keep
  const nowMs = Date.now()
  const runId = options.runId ?? newRunId(nowMs)
  const startedAt = options.now ? options.now().toISOString() : isoTime(nowMs)
  const began = performance.now()
  const scheduledFor = options.scheduledFor ?? null
  const run: NodeContext['run'] = { id: runId, startedAt, trigger: options.trigger, scheduledFor }
  // SPEC §23: null unless this project's spans are exported (then the SDK is loaded already).
  const tracer = tracerFor(project)
  const span = tracer
    ? tracer.startRun({
        projectId: project.settings.projectId,
        slug: flow.slug,
        runId,
        trigger: options.trigger,
        method: options.method,
        traceparent: options.traceparent,
      })
    : null
  const parking = options.parking ?? null
  if (parking && reachesCallbackWait(flow, project.flows)) run.resumeUrl = resumeUrlOf(parking, project.settings.projectId, runId, 1)
  const walk = newWalk({
    flow,
    project,
    run,
    inputs: checked.values,
    documents: new RunDocuments(store.documents, project.settings.projectId, options.insertIds),
    stopper: createRunStopper(project.settings.limits.runTimeoutMs, options.signal),
    // Steps are kept for a trace answer and for the stored run (history.keep), with raw outputs.
    steps: options.trace || keep !== 'none' ? [] : null,
    // A `_trace` answer shows every step; a stored trace alone needs none of the calls past its cut.
    meter: !options.trace && keep !== 'none' ? TraceMeter.forRun(project.settings.limits.traceBytes, storedSecrets(project, run)) : null,
    depth: 0,
    fetch: options.fetch ?? globalFetch,
    sleep: options.sleep ?? timerSleep,
    budget: new RunBudget(project.settings.limits.httpCallsPerRun),
    span,
    parking,
    seq: 0,
  })
  const start = flow.start.node
  // A retry from the failed step (replay.ts) walks from that node, with the earlier outputs in scope.
  const ending = await walkRun(walk, () => (options.resume ? resumeWalk(walk, options.resume) : start))
  const facts = {
    store,
    options,
    run,
    replayOf: options.replayOf ?? null,
    resumedFrom: options.resume?.nodeId ?? null,
    input: checked.input,
    priorMs: 0,
    began,
    span,
  }
  return settleRun(walk, ending, facts)
}

/** Walks from `first` to the run's ending; a failure or a park is an ending too. */
async function walkRun(walk: Walk, first: () => FlowNode | Promise<FlowNode>): Promise<Ending> {
  try {
    return await walkFlow(walk, await first())
  } catch (error) {
    if (error instanceof ParkRun && walk.current) return { kind: 'parked', park: error, node: walk.current }
    return failure(walk, error)
  } finally {
    walk.stopper.dispose()
  }
}

/** Records the run (or parks it) and makes its outcome. */
async function settleRun(walk: Walk, ending: Ending, facts: RunFacts): Promise<RunOutcome> {
  const { project, flow } = walk
  const { options, run, store } = facts
  const runId = run.id
  const keep = project.settings.history.keep
  const durationMs = roundMs(facts.priorMs + performance.now() - facts.began)
  const failed = ending.kind === 'failed' ? ending : null
  const parked = ending.kind === 'parked' ? ending : null
  const record: RunRecord = {
    id: runId,
    projectId: project.settings.projectId,
    flow: flow.slug,
    trigger: options.trigger,
    method: options.method,
    startedAt: run.startedAt,
    durationMs: Math.round(durationMs),
    status: failed ? 'error' : parked ? 'waiting' : 'success',
    httpStatus: ending.kind === 'response' ? ending.status : parked ? null : 500,
    ports: walk.ports,
    failedNodeId: failed ? failed.nodeId : null,
    error: failed ? failed.error : null,
    scheduledFor: run.scheduledFor,
    replayOf: facts.replayOf,
    resumedFrom: facts.resumedFrom,
  }
  if (!parked) facts.span?.end({ error: record.error, httpStatus: record.httpStatus ?? undefined })
  else facts.span?.end({ error: null })
  const details =
    walk.steps && keepsDetails(keep, failed !== null)
      ? runDetailsText({
          input: facts.input,
          runId,
          durationMs,
          steps: parked?.park.frames.length ? stepsWhileWaiting(walk, parked) : walk.steps,
          secrets: storedSecrets(project, run),
          traceBytes: project.settings.limits.traceBytes,
          storedInputBytes: project.settings.limits.storedInputBytes,
        })
      : undefined
  // Committed before the caller answers: a run whose response was sent is in history. The run's
  // inserts commit in the same transaction (one commit per run; run-documents.ts).
  const documents = await walk.documents.take()
  if (parked) {
    await parkWalk(walk, parked, facts, record, details, documents, durationMs)
    return { kind: 'response', runId, status: 202, body: { ok: true, runId, status: 'waiting' }, headers: {}, record }
  }
  const trace = options.trace && walk.steps ? { trace: { runId, durationMs, steps: maskSteps(walk.steps, project) } } : {}
  const outcome = outcomeOf(ending as Exclude<Ending, { kind: 'parked' }>, record, trace)
  // `runResponse`: the answer a caller gets (answer.ts), kept with an async run's result.
  if (options.recordRun) await options.recordRun(record, details, runResponse(outcome), documents)
  else await store.history.recordRun(record, project.settings.limits.historyRuns, details, documents)
  return outcome
}

function outcomeOf(ending: Exclude<Ending, { kind: 'parked' }>, record: RunRecord, trace: { trace?: Trace }): RunOutcome {
  const runId = record.id
  if (ending.kind === 'failed') return { kind: 'failed', runId, nodeId: ending.nodeId, error: ending.error, record, ...trace }
  return { kind: 'response', runId, status: ending.status, body: ending.body, headers: ending.headers, record, ...trace }
}

/**
 * The steps a run parked inside a called flow shows while it waits (run page, approval page): its
 * own, then its call node in progress with the called flows' steps so far nested under it; its output
 * says what the run waits for and until when. Only the `waiting` record has that step; the resumed
 * run records the call when it finishes.
 */
function stepsWhileWaiting(walk: Walk, parked: Extract<Ending, { kind: 'parked' }>): TraceStep[] {
  const { frames } = parked.park
  const output = { waiting: parked.park.kind, until: new Date(parked.park.dueAt).toISOString() }
  const inProgress = (flow: Flow | undefined, nodeId: string, index: number): TraceStep => {
    const node = flow?.nodesById.get(nodeId)
    const frame = frames[index]!
    const called = flows.get(frame.flow)
    const steps = index + 1 < frames.length ? [...(frame.steps ?? []), inProgress(called, frame.nodeId, index + 1)] : (frame.steps ?? [])
    return { nodeId, type: node?.type ?? 'call', name: node?.name ?? nodeId, port: null, durationMs: 0, output, calls: [{ flow: frame.flow, steps }] }
  }
  const flows = walk.project.flows
  return [...(walk.steps ?? []), inProgress(walk.flow, parked.node.id, 0)]
}

/** Commits the parked run: its state, and its `waiting` record (SPEC §22, park.ts). */
async function parkWalk(
  walk: Walk,
  parked: Extract<Ending, { kind: 'parked' }>,
  facts: RunFacts,
  record: RunRecord,
  details: RunDetailsText | undefined,
  documents: readonly RunDocument[],
  activeMs: number,
): Promise<void> {
  const parking = walk.parking!
  const { run } = facts
  const scope: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(walk.scope)) if (name !== 'run') scope[name] = value
  const seq = walk.seq + 1
  const state: ParkedState = {
    v: 1,
    flow: walk.flow.slug,
    nodeId: parked.node.id,
    ...(parked.park.frames.length > 0 ? { frames: parked.park.frames } : {}),
    kind: parked.park.kind,
    dueAt: parked.park.dueAt,
    parkedAt: new Date().toISOString(),
    run: {
      id: run.id,
      startedAt: run.startedAt,
      trigger: record.trigger,
      method: record.method,
      scheduledFor: run.scheduledFor,
      replayOf: facts.replayOf,
      resumedFrom: facts.resumedFrom,
    },
    scope,
    ports: walk.ports,
    steps: walk.steps,
    input: facts.input,
    activeMs,
    seq,
  }
  const write = {
    id: run.id,
    projectId: record.projectId,
    flow: record.flow,
    kind: parked.park.kind,
    dueAt: parked.park.dueAt,
    state: parkedStateText(state, storedSecrets(walk.project, run)),
    seq,
    ...(parking.claimToken ? { claimToken: parking.claimToken } : {}),
    ...(parking.asyncClaimToken ? { asyncClaimToken: parking.asyncClaimToken } : {}),
  }
  await parking.store.park(write, record, walk.project.settings.limits.historyRuns, details, documents)
}

/** The secrets masked in what a run stores: the project's, and the token of its resume URL (a credential too). */
function storedSecrets(project: Project, run: NodeContext['run']): Secrets {
  const token = run.resumeUrl ? new URL(run.resumeUrl, 'http://flowctl.invalid').searchParams.get('token') : null
  return token ? new Map([...project.secrets, ['run.resumeUrl token', token]]) : project.secrets
}

/** How a resumed run goes on: its stored state, the wait's port and output, and how it may park again. */
export interface ResumeOptions {
  project: Project
  store: Store
  state: ParkedState
  port: WakePort
  /** The wait's output: a callback's `{ body, receivedAt }`, a sleep's `{ waitedMs }`, a timeout's `{ timedOutAt }`. */
  output: unknown
  parking: RunParking
  signal?: AbortSignal
  insertIds?: RunOptions['insertIds']
  recordRun: NonNullable<RunOptions['recordRun']>
}

/**
 * Goes on with a parked run at its wait (SPEC §22): the wait's step and port, then the walk as
 * usual, with the run's timeout counting this stretch only. The flow's current version runs; a
 * flow or wait node that is gone fails the run with the reason.
 */
export async function resumeRun(options: ResumeOptions): Promise<RunOutcome> {
  const { project, store, state, parking } = options
  const began = performance.now()
  const run: NodeContext['run'] = { id: state.run.id, startedAt: state.run.startedAt, trigger: state.run.trigger, scheduledFor: state.run.scheduledFor }
  const flow = project.flows.get(state.flow ?? '') ?? null
  const at = flow?.nodesById.get(state.nodeId) ?? null
  const facts: RunFacts = {
    store,
    options: { trigger: state.run.trigger, method: state.run.method, recordRun: options.recordRun },
    run,
    replayOf: state.run.replayOf,
    resumedFrom: state.run.resumedFrom ?? null,
    input: state.input,
    priorMs: state.activeMs,
    began,
    span: null,
  }
  const walk = newWalk({
    flow: flow ?? ({ slug: state.flow, nodes: [], nodesById: new Map() } as unknown as Flow),
    project,
    run,
    inputs: {},
    documents: new RunDocuments(store.documents, project.settings.projectId, options.insertIds),
    stopper: createRunStopper(project.settings.limits.runTimeoutMs, options.signal),
    steps: state.steps,
    // No bound is carried across the wait: a resumed run keeps every step it records.
    meter: null,
    depth: 0,
    fetch: globalFetch,
    sleep: timerSleep,
    budget: new RunBudget(project.settings.limits.httpCallsPerRun),
    span: null,
    parking,
    seq: state.seq,
  })
  if (flow && reachesCallbackWait(flow, project.flows)) run.resumeUrl = resumeUrlOf(parking, project.settings.projectId, run.id, state.seq + 1)
  Object.assign(walk.scope, state.scope)
  walk.ports.push(...state.ports)
  const frames = state.frames ?? []
  let gone = !flow
    ? `flow "${state.flow}" is no longer in the project`
    : !at
      ? `the ${frames.length > 0 ? 'call' : 'wait'} node "${state.nodeId}" is no longer in flow "${flow.slug}"`
      : null
  if (!gone && at && frames.length > 0 && at.type !== 'call') gone = `node "${at.id}" of flow "${state.flow}" is no longer a call node`
  if (gone || !at) {
    walk.stopper.dispose()
    return settleRun(walk, { kind: 'failed', nodeId: null, error: gone ?? '' }, facts)
  }
  // The wait is in a called flow: the call node runs again, and its callFlow goes on with the frames.
  if (frames.length > 0) {
    walk.resume = { callNodeId: at.id, frames, port: options.port, output: options.output }
    return settleRun(walk, await walkRun(walk, () => at), facts)
  }
  const next = wakeAt(walk, at, options.port, options.output)
  if (!next) {
    walk.stopper.dispose()
    return settleRun(walk, { kind: 'response', status: 204, body: undefined, headers: {} }, facts)
  }
  return settleRun(walk, await walkRun(walk, () => next), facts)
}

/** The wait a run parked at takes its output and port (its step is recorded); returns the node after it, if any. */
function wakeAt(walk: Walk, wait: FlowNode, port: WakePort, output: unknown): FlowNode | undefined {
  walk.current = wait
  walk.stepBegan = performance.now()
  walk.scope[wait.refName] = output
  if (port !== 'out' && walk.depth === 0) walk.ports.push({ nodeId: wait.id, port })
  if (walk.steps) walk.steps.push({ nodeId: wait.id, type: wait.type, name: wait.name, port, durationMs: 0, output })
  const nextId = wait.next[port]
  return nextId === undefined ? undefined : walk.flow.nodesById.get(nextId)
}

/** One run (or sub-flow run) in progress. `current` is the node that fails when anything throws. */
interface Walk {
  flow: Flow
  project: Project
  /** The run's documents port (its pending inserts), shared with its sub-flows. */
  documents: RunDocuments
  run: NodeContext['run']
  scope: Scope
  resolve: (value: unknown) => unknown
  /** The values of the running node's `{{= }}` expressions, read by `resolve`. */
  expressionValues: ExpressionValues
  inputs: Record<string, unknown>
  stopper: RunStopper
  ports: RunRecord['ports']
  steps: TraceStep[] | null
  /** Whether a sub-flow call's steps would be left out of the stored trace (null: keep them all). */
  meter: TraceMeter | null
  current: FlowNode | null
  stepBegan: number
  /** 0 for a run, 1 for a flow it calls, and so on. */
  depth: number
  /** How http nodes send requests (RunOptions.fetch); sub-flows share it. */
  fetch: NodeFetch
  /** How the run waits (RunOptions.sleep); sub-flows share it. */
  sleep: RunSleep
  /** The run's share of the event loop and its http requests; sub-flows share it (SPEC §18). */
  budget: RunBudget
  /** What the trace step of the failing node adds: its last attempt and its sub-flow traces. */
  failedStep: { attempt: number | undefined; calls: StepContext['calls'] } | null
  /** The parent of this walk's step spans: the run's span, or a sub-flow's calling step's (null: not exported). */
  span: TraceSpan | null
  /** How the run may park (SPEC §22); null when its caller waits for its answer. Sub-flows never park. */
  parking: RunParking | null
  /** How many times the run has parked so far. */
  seq: number
  /** A resumed run whose wait is in a called flow: the frames still to enter, taken by the next callFlow. */
  resume: ResumeFrames | null
}

/** What a resumed walk hands the flow its call node calls: the called flows' frames (outermost first) and the wake. */
interface ResumeFrames {
  /** The caller's call node that enters them (its first attempt after the resume). */
  callNodeId: string
  frames: ParkedFrame[]
  port: WakePort
  output: unknown
}

type WalkStart = Pick<
  Walk,
  'flow' | 'project' | 'documents' | 'run' | 'inputs' | 'stopper' | 'steps' | 'meter' | 'depth' | 'fetch' | 'sleep' | 'budget' | 'span' | 'parking' | 'seq'
>

const globalFetch: NodeFetch = (url, init) => fetch(url, init)
/** The longest delay a Node timer takes (a longer one fires after 1 ms, with a warning). */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Node's timers count from the event loop's cached clock, so one can fire up to a millisecond early:
 * sleep again for what is left (and a wait past a timer's range sleeps in turns).
 */
const timerSleep: RunSleep = async (ms, signal) => {
  const until = performance.now() + ms
  let left = ms
  do {
    await sleepFor(Math.min(Math.ceil(left), MAX_TIMER_MS), undefined, { signal })
    left = until - performance.now()
  } while (left > 0)
}

function newWalk(start: WalkStart): Walk {
  const scope = createScope(start.run)
  const expressionValues: ExpressionValues = new Map()
  // Written out rather than spread: this runs for every run, and a spread object is slower to make.
  return {
    flow: start.flow,
    project: start.project,
    documents: start.documents,
    run: start.run,
    scope,
    resolve: createResolver(start.flow, scope, start.project.secrets, expressionValues),
    expressionValues,
    inputs: start.inputs,
    stopper: start.stopper,
    ports: [],
    steps: start.steps,
    meter: start.meter,
    current: null,
    stepBegan: 0,
    depth: start.depth,
    fetch: start.fetch,
    sleep: start.sleep,
    budget: start.budget,
    failedStep: null,
    span: start.span,
    parking: start.parking,
    seq: start.seq,
    resume: null,
  }
}

/** What a node sees; `signal` is a getter so runs whose nodes never read it make no AbortController. */
class StepContext implements NodeContext {
  /** Sub-flow traces of this step, in call order (a slot is taken when the call starts). */
  calls: { flow: string; steps: TraceStep[] }[] | null = null

  constructor(
    readonly node: FlowNode,
    private readonly walk: Walk,
    readonly inputs: Record<string, unknown> | undefined,
    /** This attempt's span (null: not exported); its http requests send its `traceparent`. */
    readonly span: TraceSpan | null,
  ) {}

  get project(): Project {
    return this.walk.project
  }

  get documents(): DocumentsPort {
    return this.walk.documents
  }

  get resolve(): (value: unknown) => unknown {
    return this.walk.resolve
  }

  get run(): NodeContext['run'] {
    return this.walk.run
  }

  resolveParts(text: string): ResolvedPart[] {
    const { walk } = this
    return resolveParts(text, walk.scope, walk.project.secrets, templateCacheOf(walk.flow), walk.expressionValues)
  }

  get signal(): AbortSignal {
    return this.walk.stopper.signal
  }

  /** The run's fetch, counting every request (redirect hops included) against limits.httpCallsPerRun. */
  get fetch(): NodeFetch {
    const { fetch, budget } = this.walk
    const { span } = this
    return (url, init, node) => {
      budget.takeHttpCall()
      if (span) init = { ...init, headers: { ...(init.headers as Record<string, string>), traceparent: span.traceparent() } }
      return fetch(url, init, node)
    }
  }

  get sleep(): RunSleep {
    return this.walk.sleep
  }

  get canPark(): boolean {
    return this.walk.parking !== null
  }

  park(kind: WaitKind, dueAt: number): never {
    if (this.walk.parking === null)
      throw new Error(
        'a callback wait parks the run, which only a run whose caller has its answer already can do (respond: async, a schedule, or a resumed run)',
      )
    // In a called flow, each callSubFlow on the way out adds its walk's frame to the park.
    throw new ParkRun(kind, dueAt)
  }

  callFlow(slug: string, body: unknown): Promise<SubFlowResult> {
    let slot: { flow: string; steps: TraceStep[] } | null = null
    // Past the stored trace's cut the call is left out of it: its steps are not kept at all.
    if (this.walk.steps && !this.walk.meter?.pastCut()) {
      slot = { flow: slug, steps: [] }
      ;(this.calls ??= []).push(slot)
    }
    // Only a `call` node's flow may park: an `each` runs several flows at once (a load error forbids
    // callback waits there; long sleeps in them wait inline).
    const parks = this.node.type === 'call'
    return callSubFlow(this.walk, slug, body, slot, this.span, parks)
  }
}

/**
 * Runs another flow of the project inside this run: same run id, stopper and documents; its own
 * scope. A `call`'s flow may park the run (SPEC §22): its walk's frame joins the park on the way out,
 * and a resumed caller's next callFlow goes on from that frame instead of the called flow's Start.
 */
async function callSubFlow(
  parent: Walk,
  slug: string,
  body: unknown,
  slot: { steps: TraceStep[] } | null,
  span: TraceSpan | null,
  parks: boolean,
): Promise<SubFlowResult> {
  const flow = parent.project.flows.get(slug)
  if (!flow?.start) throw new Error(`there is no flow "${slug}" with a start node to call`)
  if (parent.depth + 1 > MAX_CALL_DEPTH) throw new Error(`flow calls nest more than ${MAX_CALL_DEPTH} deep`)
  // Between the items of an each: give the event loop its turn, and start nothing once stopped.
  const turn = checkpoint(parent)
  if (turn) await turn
  const resumed = parks && parent.resume?.callNodeId === parent.current?.id ? parent.resume : null
  parent.resume = null
  if (resumed && resumed.frames[0]!.flow !== slug)
    throw new Error(`the call node now calls flow "${slug}", not flow "${resumed.frames[0]!.flow}" that the run waited in`)
  const checked = resumed ? null : validateInputs(flow, { body })
  if (checked && !checked.ok) {
    const error = capReason(`the input for flow "${slug}" is not valid: ${capErrorList(checked.errors).join('; ')}`)
    return { failed: error, status: 400, body: { error } }
  }
  const walk = newWalk({
    flow,
    project: parent.project,
    documents: parent.documents,
    run: parent.run,
    inputs: checked?.ok ? checked.values : {},
    // Its own race (its run's deadline): walks of an each run side by side. Left when the walk ends.
    stopper: parent.stopper.nested(),
    steps: slot ? slot.steps : null,
    meter: slot ? (parent.meter?.nested() ?? null) : null,
    depth: parent.depth + 1,
    fetch: parent.fetch,
    sleep: parent.sleep,
    budget: parent.budget,
    span,
    parking: parks ? parent.parking : null,
    seq: 0,
  })
  let ending: Ending
  try {
    const first = resumed ? resumeFrame(walk, resumed) : flow.start.node
    ending = first ? await walkFlow(walk, first) : { kind: 'response', status: 204, body: undefined, headers: {} }
  } catch (error) {
    // The run's own timeout or shutdown stops the caller too.
    if (error instanceof RunStopped) throw error
    if (error instanceof ParkRun) {
      error.frames.unshift(frameOf(walk))
      throw error
    }
    ending = failure(walk, error)
    // A spent run budget fails the caller with the same plain reason (its trace keeps the failing step).
    if (error instanceof RunBudgetSpent) throw error
  } finally {
    walk.stopper.dispose()
  }
  if (ending.kind === 'failed') {
    const error = capReason(`flow "${slug}" failed${ending.nodeId ? ` at node "${ending.nodeId}"` : ''}: ${ending.error}`)
    return { failed: error, status: 500, body: { error } }
  }
  // A park leaves walkFlow as a thrown ParkRun, so the ending here is an answer.
  if (ending.kind === 'parked') throw new Error('a called flow ended parked')
  return { failed: null, status: ending.status, body: ending.body === undefined ? null : ending.body }
}

/** A called flow's walk as a parked run stores it: stopped at `current` (its call node, or the wait). */
function frameOf(walk: Walk): ParkedFrame {
  const scope: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(walk.scope)) if (name !== 'run') scope[name] = value
  return { flow: walk.flow.slug, nodeId: walk.current?.id ?? '', scope, steps: walk.steps ? [...walk.steps] : null }
}

/**
 * Puts a resumed called flow's frame back in its walk (outputs, steps so far) and returns where it
 * goes on: its call node, which goes on with the frames within; or, at the last frame, after its wait.
 */
function resumeFrame(walk: Walk, resumed: ResumeFrames): FlowNode | undefined {
  const [frame, ...within] = resumed.frames
  Object.assign(walk.scope, frame!.scope)
  if (walk.steps && frame!.steps) walk.steps.push(...frame!.steps)
  const at = walk.flow.nodesById.get(frame!.nodeId)
  if (!at) throw new Error(`node "${frame!.nodeId}" is no longer in flow "${walk.flow.slug}"`)
  if (within.length === 0) return wakeAt(walk, at, resumed.port, resumed.output)
  if (at.type !== 'call') throw new Error(`node "${at.id}" of flow "${walk.flow.slug}" is no longer a call node`)
  walk.resume = { ...resumed, callNodeId: at.id, frames: within }
  return at
}

/**
 * Before each step and each sub-flow call: yields to the event loop when the run has held it long
 * enough (so the run timeout's timer and other callers' requests get their turn), then stops the
 * walk if the run was stopped meanwhile. Returns null (nothing to await) on most steps.
 */
function checkpoint(walk: Walk): Promise<void> | null {
  const { budget, stopper } = walk
  const turn = budget.pace()
  if (turn)
    return turn.then(() => {
      if (stopper.stoppedReason) throw stopper.stoppedReason
    })
  if (stopper.stoppedReason) throw stopper.stoppedReason
  return null
}

/**
 * A retry from the failed step: the Start runs on this run's input, then the failed run's completed
 * steps are put in place as they were stored (outputs in scope, steps in the trace marked `reused`,
 * their branches in `ports`), not executed again. Returns the node the walk goes on from.
 */
async function resumeWalk(walk: Walk, resume: ResumePoint): Promise<FlowNode> {
  const start = walk.flow.start!.node
  const from = walk.flow.nodesById.get(resume.nodeId)
  if (!from) throw new Error(`node "${resume.nodeId}" is not in flow ${walk.flow.slug}`)
  if (from === start) return start
  walk.current = start
  await runNode(walk, start, getNodeKind(start.type)!)
  for (const step of resume.steps) {
    const node = walk.flow.nodesById.get(step.nodeId)
    if (!node || node === start) continue
    walk.scope[node.refName] = step.output
    walk.steps?.push({ ...step, reused: true })
  }
  walk.ports.push(...resume.ports)
  return from
}

/** Executes nodes from `first` until an End node or a port with no edge. Throws when a node fails. */
async function walkFlow(walk: Walk, first: FlowNode): Promise<Ending> {
  const { flow } = walk
  let node = first
  for (let step = 0; ; step++) {
    walk.current = node
    const turn = checkpoint(walk)
    if (turn) await turn
    if (step >= MAX_STEPS) throw new Error(`the run passed ${MAX_STEPS} steps; do the flow's ports form a loop?`)
    const kind = getNodeKind(node.type)
    if (!kind) throw new Error(`unknown node type "${node.type}"`)
    const result = await runNode(walk, node, kind)
    // A resumed call node took its frames (or failed before its call): later nodes start their flows afresh.
    walk.resume = null

    if (result.response) return { kind: 'response', ...result.response }
    const port = result.port ?? 'out'
    const nextId = node.next[port]
    if (nextId === undefined) return { kind: 'response', status: 204, body: undefined, headers: {} }
    const next = flow.nodesById.get(nextId)
    if (!next) throw new Error(`port "${port}" leads to node "${nextId}", which does not exist`)
    node = next
  }
}

/**
 * One node, with its retries: each attempt evaluates the node's expressions and executes it. When it
 * still fails and has `onError`, its output is `{ error, attempts }` and the run goes on at port `error`.
 */
async function runNode(walk: Walk, node: FlowNode, kind: NodeKind): Promise<NodeResult> {
  const { flow, project, steps, stopper } = walk
  const retry = node.settings.retry === undefined ? null : retryOf(node.settings)
  const attempts = retry?.attempts ?? 1
  const inputs = node === flow.start?.node ? walk.inputs : undefined
  for (let attempt = 1; ; attempt++) {
    if (steps) walk.stepBegan = performance.now()
    const span = walk.span ? walk.span.step(node, attempt) : null
    const context = new StepContext(node, walk, inputs, span)
    let result: NodeResult
    /** The masked reason of a failure the error branch took over (the step's span records it). */
    let failedReason: string | null = null
    try {
      // Most nodes have no expressions: they do not wait for an evaluation that has nothing to do.
      if (expressionsOf(flow, node, kind.literalSettings).length > 0)
        await stopper.race(evaluateNodeExpressions(flow, node, walk.scope, project.settings.limits, walk.expressionValues))
      result = await stopper.race(kind.execute(context))
    } catch (error) {
      if (error instanceof RunStopped) {
        span?.end({ error: error.message })
        throw error
      }
      // A park is not a failure: no retry, no error branch (the run goes on when it is resumed).
      if (error instanceof ParkRun) {
        span?.end({ port: null, error: null })
        throw error
      }
      const reason = maskedReason(messageOf(error), project.secrets)
      if (retry && attempt < attempts && !(error instanceof FinalFailure)) {
        span?.end({ error: reason })
        recordStep(walk, node, context, null, failedOutput(reason, error), attempt)
        await pause(walk, retryDelayMs(retry, attempt + 1))
        continue
      }
      const onError = typeof node.settings.onError === 'string' ? node.settings.onError : null
      if (!onError) {
        span?.end({ error: reason })
        walk.failedStep = { attempt: retry ? attempt : undefined, calls: context.calls }
        throw error
      }
      failedReason = reason
      result = { output: { error: reason, attempts: attempt }, port: 'error' }
    }
    if (result.retryable && retry && attempt < attempts) {
      span?.end({ error: 'a retryable answer; tried again' })
      recordStep(walk, node, context, null, result.output, attempt)
      await pause(walk, retryDelayMs(retry, attempt + 1))
      continue
    }
    walk.scope[node.refName] = result.output
    const port = result.response ? null : (result.port ?? 'out')
    span?.end({ port, error: failedReason })
    // If and Switch name their port, and so does an error branch; the record lists exactly those.
    if (result.port !== undefined && walk.depth === 0) walk.ports.push({ nodeId: node.id, port: result.port })
    recordStep(walk, node, context, port, result.output, retry ? attempt : undefined)
    return result
  }
}

function recordStep(walk: Walk, node: FlowNode, context: StepContext, port: string | null, output: unknown, attempt: number | undefined): void {
  if (!walk.steps) return
  const durationMs = roundMs(performance.now() - walk.stepBegan)
  // Raw here: masked once where a trace leaves the engine (the `_trace` answer, the stored run).
  const step: TraceStep = { nodeId: node.id, type: node.type, name: node.name, port, durationMs, output }
  if (attempt !== undefined) step.attempt = attempt
  if (context.calls) step.calls = context.calls
  walk.steps.push(step)
  walk.meter?.record(output)
}

/** Waits between attempts; the run's timeout cuts the wait short. */
async function pause(walk: Walk, ms: number): Promise<void> {
  if (ms <= 0) return
  await walk.stopper.race(walk.sleep(ms, walk.stopper.signal))
}

/** The failed ending: the failing node, the reason with secrets masked, and a trace step for it. */
function failure(walk: Walk, error: unknown): Ending {
  const { current, steps, project } = walk
  const reason = error instanceof RunStopped ? error.message : messageOf(error)
  const masked = maskedReason(reason, project.secrets)
  if (steps && current) {
    const durationMs = roundMs(performance.now() - walk.stepBegan)
    const output = failedOutput(masked, error)
    const step: TraceStep = { nodeId: current.id, type: current.type, name: current.name, port: null, durationMs, output }
    if (walk.failedStep?.attempt !== undefined) step.attempt = walk.failedStep.attempt
    if (walk.failedStep?.calls) step.calls = walk.failedStep.calls
    steps.push(step)
  }
  return { kind: 'failed', nodeId: current?.id ?? null, error: masked }
}

/** A failed step's output: the reason, and what the failure tells beside it (an http call's request and answer). */
function failedOutput(reason: string, error: unknown): Record<string, unknown> {
  return error instanceof StepFailure ? { error: reason, ...error.details } : { error: reason }
}

/** A trace's steps with secrets shown as `***`, sub-flow steps included. */
function maskSteps(steps: TraceStep[], project: Project): TraceStep[] {
  return steps.map((step) => {
    const masked: TraceStep = { ...step, output: maskValue(step.output, project.secrets) }
    if (step.calls) masked.calls = step.calls.map((call) => ({ flow: call.flow, steps: maskSteps(call.steps, project) }))
    return masked
  })
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  return String(error)
}

function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100
}
