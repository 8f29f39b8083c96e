// The one engine every trigger calls (Run API, `flowctl run`, the scheduler): validate the inputs,
// follow ports from the Start node, record the run. Node kinds live in src/nodes/.
import { FlowctlError } from '../errors.js'
import { getNodeKind } from '../nodes/registry.js'
import type { NodeContext, NodeResult } from '../nodes/types.js'
import type { Flow, FlowNode, Project } from '../project/model.js'
import { maskSecrets } from '../project/secrets.js'
import type { RunRecord, Store } from '../store/types.js'
import { validateInputs } from './inputs.js'
import { keepsDetails, runDetailsText } from './run-details.js'
import { maskValue } from './mask.js'
import { createResolver, createScope, type Scope } from './resolve.js'
import { createRunStopper, RunStopped, type RunStopper } from './stopper.js'
import type { RunOptions, RunOutcome, TraceStep } from './types.js'

/** A guard against flows whose ports form a loop that never waits (the timeout could never fire). */
const MAX_STEPS = 10_000

type Ending =
  | { kind: 'response'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'failed'; nodeId: string | null; error: string }

export async function runFlow(options: RunOptions): Promise<RunOutcome> {
  const { project, flow, store } = options
  if (!flow.start) throw new FlowctlError('FLOW_NOT_FOUND', `flow "${flow.slug}" has no start node and cannot be run`)

  const checked = validateInputs(flow, options.input)
  if (!checked.ok) return { kind: 'invalid', errors: checked.errors }

  const keep = project.settings.history.keep
  const nowMs = Date.now()
  const runId = newRunId(nowMs)
  const startedAt = options.now ? options.now().toISOString() : isoTime(nowMs)
  const began = performance.now()
  const run = { id: runId, startedAt, trigger: options.trigger }
  const scope = createScope(run)
  const walk: Walk = {
    flow,
    project,
    store,
    run,
    scope,
    resolve: createResolver(flow, scope, project.secrets),
    inputs: checked.values,
    stopper: createRunStopper(project.settings.limits.runTimeoutMs, options.signal),
    ports: [],
    // Steps hold raw outputs; they are masked when a trace is returned or stored.
    steps: options.trace || keep !== 'none' ? [] : null,
    current: null,
    stepBegan: 0,
  }

  let ending: Ending
  try {
    ending = await walkFlow(walk, flow.start.node)
  } catch (error) {
    ending = failure(walk, error)
  } finally {
    walk.stopper.dispose()
  }

  const durationMs = roundMs(performance.now() - began)
  const failed = ending.kind === 'failed' ? ending : null
  const record: RunRecord = {
    id: runId,
    projectId: project.settings.projectId,
    flow: flow.slug,
    trigger: options.trigger,
    method: options.method,
    startedAt,
    durationMs: Math.round(durationMs),
    status: failed ? 'error' : 'success',
    httpStatus: ending.kind === 'response' ? ending.status : 500,
    ports: walk.ports,
    failedNodeId: failed ? failed.nodeId : null,
    error: failed ? failed.error : null,
    replayOf: options.replayOf ?? null,
  }
  const details =
    walk.steps && keepsDetails(keep, failed !== null)
      ? runDetailsText({ input: checked.input, runId, durationMs, steps: walk.steps, secrets: project.secrets, traceBytes: project.settings.limits.traceBytes })
      : undefined
  // Committed before the caller answers: a run whose response was sent is in history.
  await store.recordRun(record, project.settings.limits.historyRuns, details)

  const trace = options.trace && walk.steps ? { trace: { runId, durationMs, steps: walk.steps.map((step) => maskStep(step, project)) } } : {}
  if (ending.kind === 'failed') return { kind: 'failed', runId, nodeId: ending.nodeId, error: ending.error, record, ...trace }
  return { kind: 'response', runId, status: ending.status, body: ending.body, headers: ending.headers, record, ...trace }
}

/** One run in progress. `current` is the node that fails when anything throws. */
interface Walk {
  flow: Flow
  project: Project
  store: Store
  run: NodeContext['run']
  scope: Scope
  resolve: (value: unknown) => unknown
  inputs: Record<string, unknown>
  stopper: RunStopper
  ports: RunRecord['ports']
  steps: TraceStep[] | null
  current: FlowNode | null
  stepBegan: number
}

/** What a node sees; `signal` is a getter so runs whose nodes never read it make no AbortController. */
class StepContext implements NodeContext {
  constructor(
    readonly node: FlowNode,
    readonly project: Project,
    readonly store: Store,
    readonly resolve: (value: unknown) => unknown,
    readonly run: NodeContext['run'],
    readonly inputs: Record<string, unknown> | undefined,
    private readonly stopper: RunStopper,
  ) {}

  get signal(): AbortSignal {
    return this.stopper.signal
  }
}

/** Executes nodes from `first` until an End node or a port with no edge. Throws when a node fails. */
async function walkFlow(walk: Walk, first: FlowNode): Promise<Ending> {
  const { flow, project, store, steps, stopper } = walk
  let node = first
  for (let step = 0; ; step++) {
    walk.current = node
    if (stopper.stoppedReason) throw stopper.stoppedReason
    if (step >= MAX_STEPS) throw new Error(`the run passed ${MAX_STEPS} steps; do the flow's ports form a loop?`)
    const kind = getNodeKind(node.type)
    if (!kind) throw new Error(`unknown node type "${node.type}"`)
    if (steps) walk.stepBegan = performance.now()
    const inputs = node === flow.start?.node ? walk.inputs : undefined
    const context: NodeContext = new StepContext(node, project, store, walk.resolve, walk.run, inputs, stopper)
    const result: NodeResult = await stopper.race(kind.execute(context))

    walk.scope[node.refName] = result.output
    const port = result.response ? null : (result.port ?? 'out')
    // Only If and Switch name their port; the record lists exactly those.
    if (result.port !== undefined) walk.ports.push({ nodeId: node.id, port: result.port })
    if (steps) {
      const durationMs = roundMs(performance.now() - walk.stepBegan)
      steps.push({ nodeId: node.id, type: node.type, name: node.name, port, durationMs, output: result.output })
    }

    if (result.response) return { kind: 'response', ...result.response }
    const nextId = port === null ? undefined : node.next[port]
    if (nextId === undefined) return { kind: 'response', status: 204, body: undefined, headers: {} }
    const next = flow.nodesById.get(nextId)
    if (!next) throw new Error(`port "${port}" leads to node "${nextId}", which does not exist`)
    node = next
  }
}

/** The failed ending: the failing node, the reason with secrets masked, and a trace step for it. */
function failure(walk: Walk, error: unknown): Ending {
  const { current, steps, project } = walk
  const reason = error instanceof RunStopped ? error.message : messageOf(error)
  const masked = maskSecrets(reason, project.secrets)
  if (steps && current) {
    const durationMs = roundMs(performance.now() - walk.stepBegan)
    steps.push({ nodeId: current.id, type: current.type, name: current.name, port: null, durationMs, output: { error: masked } })
  }
  return { kind: 'failed', nodeId: current?.id ?? null, error: masked }
}

function maskStep(step: TraceStep, project: Project): TraceStep {
  return { ...step, output: maskValue(step.output, project.secrets) }
}

let lastStamp = -1
let stampText = ''
let sequence = 0

/**
 * A unique run id that sorts by time: the millisecond in base 36 (fixed width), a counter within the
 * millisecond, then randomness so ids made by several processes do not collide.
 */
export function newRunId(now: number = Date.now()): string {
  if (now === lastStamp) sequence++
  else {
    sequence = 0
    lastStamp = now
    stampText = now.toString(36).padStart(9, '0')
  }
  const random = Math.floor(Math.random() * 36 ** 6).toString(36).padStart(6, '0')
  return stampText + sequence.toString(36).padStart(3, '0') + random
}

let isoStamp = Number.NaN
let isoText = ''

/** `new Date(ms).toISOString()`, kept for the millisecond: busy servers start several runs in one. */
function isoTime(ms: number): string {
  if (ms !== isoStamp) {
    isoText = new Date(ms).toISOString()
    isoStamp = ms
  }
  return isoText
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  return String(error)
}

function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100
}
