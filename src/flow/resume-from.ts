// Retry from the failed step (SPEC §22): which stored steps of a failed run a new run can reuse, and
// where it goes on, checked against the flow's current version. Every refusal is REPLAY_UNAVAILABLE
// (409) with a message that says why and what to do instead; nothing has run when one is thrown.
import { FlowctlError } from '../errors.js'
import type { Flow } from '../model/project.js'
import type { ResumePoint } from '../model/run.js'
import type { StoredRun, StoredTraceStep } from '../model/store.js'

/** The end of an output cut at `limits.traceBytes` (run-details.ts `cutMarker`), whatever the cap was then. */
const CUT_OUTPUT = /\[cut: this run's trace passed limits\.traceBytes \(\d+ bytes\)\]$/
/** What a secret became in a stored output (mask.ts): the value itself is gone. */
const MASK = '***'

/**
 * The resume point of a failed run on `flow` (its current version): the run's completed steps before
 * its failed node, which must still be the path the flow takes to that node, through nodes of the
 * same kinds, with outputs stored whole (not cut, no secret masked). Throws REPLAY_UNAVAILABLE.
 */
export function resumePointOf(run: StoredRun, flow: Flow): ResumePoint {
  const failedNodeId = failedNodeOf(run)
  const point = resumeOrWhy(run, flow, failedNodeId)
  if (typeof point === 'string') throw new FlowctlError('REPLAY_UNAVAILABLE', `run ${run.id} cannot be retried from node "${failedNodeId}": ${point}`)
  return point
}

/** Why a failed run cannot be retried from its failed node (the run page says it beside the Replay button), or null when it can. */
export function whyNotResumable(run: StoredRun, flow: Flow): string | null {
  if (run.status !== 'error' || !run.failedNodeId) return 'the run did not fail at a node'
  const point = resumeOrWhy(run, flow, run.failedNodeId)
  return typeof point === 'string' ? point : null
}

/** The failed node of a run that failed at a node; refuses any other run. */
function failedNodeOf(run: StoredRun): string {
  if (run.status !== 'error') {
    throw new FlowctlError(
      'REPLAY_UNAVAILABLE',
      `run ${run.id} did not fail (its status is "${run.status}"), so there is no failed node to retry from; replay it whole instead`,
    )
  }
  if (!run.failedNodeId) throw new FlowctlError('REPLAY_UNAVAILABLE', `run ${run.id} failed before any node ran; replay it whole instead`)
  return run.failedNodeId
}

/** The resume point, or why there is none (a sentence that ends with what to do instead). */
function resumeOrWhy(run: StoredRun, flow: Flow, failedNodeId: string): ResumePoint | string {
  if (!run.trace) return 'it kept no trace (history.keep in flowctl.yaml), so the outputs of its steps are not known; replay it whole instead'
  if (!flow.nodesById.has(failedNodeId)) return `flow ${flow.slug} no longer has that node; replay the run whole instead`
  const startId = flow.start!.node.id
  const steps = completedSteps(run.trace.steps)
  const changed = pathChange(steps, flow, failedNodeId)
  if (changed) return `${changed}; replay the run whole instead`
  for (const step of steps) {
    const unusable = step.nodeId === startId ? null : unusableOutput(step, run.trace.cut)
    if (unusable) return `the stored output of step "${step.nodeId}" ${unusable}, so it cannot be reused; replay the run whole instead`
  }
  return { nodeId: failedNodeId, steps: steps.filter((step) => step.nodeId !== startId), ports: run.ports }
}

/**
 * The steps that completed (took a port), in order: the failed attempts of a node with retry and the
 * failed node's own step took none. A failed run ends at its failed node, so all of them came before it.
 */
function completedSteps(steps: readonly StoredTraceStep[]): StoredTraceStep[] {
  return steps.filter((step) => step.port !== null)
}

/**
 * The stored steps must be a path of the current version: from its Start, each step's node with the
 * same kind, its port leading to the next step's node, and the last one's to the failed node. So a
 * changed node after the failure, or a changed setting before it, is fine; a changed way there is
 * not. Returns what changed, or null.
 */
function pathChange(steps: readonly StoredTraceStep[], flow: Flow, failedNodeId: string): string | null {
  let expected = flow.start!.node.id
  let from = 'the start'
  for (const step of steps) {
    if (step.nodeId !== expected) {
      return `the flow changed before it: the run went from ${from} to node "${step.nodeId}", the current version goes to "${expected}"`
    }
    const node = flow.nodesById.get(step.nodeId)!
    if (node.type !== step.type) return `node "${node.id}" is now a ${node.type} node, not the ${step.type} node whose output was stored`
    const next = node.next[step.port!]
    if (next === undefined) return `the flow changed before it: port "${step.port}" of node "${node.id}" leads nowhere in the current version`
    expected = next
    from = `node "${node.id}" (port ${step.port})`
  }
  return expected === failedNodeId ? null : `the flow changed before it: ${from} now leads to node "${expected}"`
}

/** Why a stored output is not the output the node gave (null when it is). */
function unusableOutput(step: StoredTraceStep, traceCut: boolean): string | null {
  if (traceCut && typeof step.output === 'string' && CUT_OUTPUT.test(step.output)) return 'was cut at limits.traceBytes'
  // A masked secret is `***` in the text: the value is not there to put back. A literal `***` in an
  // output cannot be told apart, so it is refused too (the safe side: nothing runs twice).
  if ((JSON.stringify(step.output) ?? '').includes(MASK)) return 'has a secret masked as ***'
  return null
}
