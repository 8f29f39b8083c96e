// The background workers of async runs (SPEC §12, `respond: async`) in one `serve` process: per
// project, up to `limits.asyncConcurrency` runs at once, claimed from the store's durable queue
// (src/model/async-runs.ts). Each claim is fair across flows (SPEC §18, pickFairly): a freed worker
// goes to the flow with the fewest runs under way, so one flow's backlog holds another flow's run
// back for at most the time one of its runs takes to finish, however long the backlog. A worker claims with a fresh token and a lease it renews every third
// of the lease, so the runs of an instance that was SIGKILLed are claimed again by any instance once
// their lease runs out. Each run goes through the one engine with the id its 202 named; its history
// record, its inserts and its queue row's completion commit in one transaction, so it is recorded
// exactly once. The claim loop (free slots, re-claims) is claim-pump.ts, shared with the wait runner.
// Side effects are another matter: see README "Async runs".
import { createHash, randomUUID } from 'node:crypto'
import { httpError } from '../errors.js'
import { errorBody, runResponse } from '../flow/answer.js'
import { acquireFlowSlot } from '../flow/concurrency.js'
import { runFlow } from '../flow/engine.js'
import { mayPark, openParking } from '../flow/park.js'
import { concurrencyOf } from '../project/guard-settings.js'
import type { InsertIds, RunInput, RunResponse } from '../model/run.js'
import type { Flow, Project } from '../model/project.js'
import { isAsyncClaimLost, type ClaimedAsyncRun } from '../model/async-runs.js'
import type { RunDetailsText, RunDocument, RunRecord, Store } from '../model/store.js'
import type { Workspace } from '../serve/workspace.js'
import { ClaimPump } from './claim-pump.js'

export interface AsyncRunnerOptions {
  /** A claim lasts this long unless renewed (default 10 s): how soon a killed instance's runs are taken over. */
  leaseMs?: number
  /** How often each project's queue is checked for work queued elsewhere (default 500 ms). */
  pollMs?: number
  /** Lines for the serve log (a run taken over, a store error). */
  log?: (line: string) => void
}

/** A claimed async run with the claim's token and the store it was claimed from. */
interface AsyncWork {
  claimed: ClaimedAsyncRun
  token: string
  store: Store
}

const IDLE_PROJECT_POLLS = 10

const asyncFlowsByProject = new WeakMap<Project, boolean>()
function hasAsyncFlow(project: Project): boolean {
  let found = asyncFlowsByProject.get(project)
  if (found === undefined) {
    found = [...project.flows.values()].some((flow) => flow.start?.respond === 'async')
    asyncFlowsByProject.set(project, found)
  }
  return found
}

/** Thrown by the record hook when shutdown stopped the run: its claim is released instead. */
class RunReleased extends Error {}

export class AsyncRunner {
  readonly #workspace: Workspace
  readonly #leaseMs: number
  readonly #pollMs: number
  readonly #log: (line: string) => void
  readonly #pump: ClaimPump<AsyncWork>
  /** Claim tokens in use: their project and how many of their runs are still going. */
  readonly #tokens = new Map<string, { projectId: string; left: number }>()
  readonly #abort = new AbortController()
  #timers: NodeJS.Timeout[] = []

  constructor(workspace: Workspace, options: AsyncRunnerOptions = {}) {
    this.#workspace = workspace
    this.#leaseMs = options.leaseMs ?? 10_000
    this.#pollMs = options.pollMs ?? 500
    this.#log = options.log ?? (() => {})
    this.#pump = new ClaimPump<AsyncWork>({
      concurrency: (projectId) => {
        const entry = this.#workspace.get(projectId)
        return entry?.store ? entry.project.settings.limits.asyncConcurrency : 0
      },
      claim: (projectId, limit) => this.#claim(projectId, limit),
      run: (work) => this.#execute(work),
      claimFailed: (projectId, message) => this.#log(`${projectId}: cannot claim async runs: ${message}`),
    })
  }

  /** Starts polling every project's queue and renewing this instance's leases. */
  start(): this {
    let tick = 0
    const poll = setInterval(() => {
      tick += 1
      for (const { project } of this.#workspace.list()) {
        // A project without an async flow is looked at 10× less often: only runs queued before a
        // reload turned its flows synchronous can be waiting there.
        if (tick % IDLE_PROJECT_POLLS === 0 || hasAsyncFlow(project)) this.wake(project.settings.projectId)
      }
    }, this.#pollMs)
    const renew = setInterval(() => void this.#renewLeases(), Math.max(50, Math.floor(this.#leaseMs / 3)))
    poll.unref()
    renew.unref()
    this.#timers = [poll, renew]
    // Runs left queued by a previous process start without waiting for the first poll.
    for (const entry of this.#workspace.list()) this.wake(entry.project.settings.projectId)
    return this
  }

  /** Looks for work in one project now (a run was just queued here). */
  wake(projectId: string): void {
    this.#pump.wake(projectId)
  }

  /**
   * Stops claiming, waits up to `graceMs` for the runs under way, then stops those still going:
   * their claims are released, so the next instance (or this one restarted) runs them again.
   */
  async stop(graceMs: number): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer)
    await this.#pump.stop(graceMs, () => this.#abort.abort())
  }

  async #claim(projectId: string, limit: number): Promise<AsyncWork[]> {
    const store = this.#workspace.get(projectId)?.store
    if (!store) return []
    const token = randomUUID()
    const claimed = await store.queue.claim(projectId, { limit, leaseMs: this.#leaseMs, token })
    // The token's lease is renewed while any of its runs is going.
    if (claimed.length > 0) this.#tokens.set(token, { projectId, left: claimed.length })
    return claimed.map((run) => ({ claimed: run, token, store }))
  }

  async #execute({ claimed, token, store }: AsyncWork): Promise<void> {
    try {
      if (claimed.attempts > 1)
        this.#log(`${claimed.projectId}: async run ${claimed.id} taken over (attempt ${claimed.attempts}; its previous worker stopped before finishing)`)
      await this.#runClaimed(claimed, token, store)
    } catch (error) {
      if (error instanceof RunReleased) {
        await store.queue.release(claimed.id, token).catch(() => {})
      } else if (isAsyncClaimLost(error)) {
        this.#log(`${claimed.projectId}: async run ${claimed.id} was finished by another worker; this attempt's result is dropped`)
      } else {
        // The claim stays: once its lease runs out the run is claimed again and run again.
        this.#log(`${claimed.projectId}: async run ${claimed.id} could not be recorded: ${error instanceof Error ? error.message : String(error)}`)
      }
    } finally {
      const held = this.#tokens.get(token)
      if (held && --held.left === 0) this.#tokens.delete(token)
    }
  }

  async #runClaimed(claimed: ClaimedAsyncRun, token: string, store: Store): Promise<void> {
    // The project as it is now: a reload since the 202 applies, as it would to a run starting now.
    const project = this.#workspace.get(claimed.projectId)?.project
    if (!project) throw new RunReleased()
    // The record, the run's inserts and the queue row's completion commit in one transaction.
    const finish = (record: RunRecord, details: RunDetailsText | undefined, response: RunResponse, documents: readonly RunDocument[] = []) => {
      // Shutdown stopped the run midway: it goes back to the queue rather than being recorded as failed.
      if (this.#abort.signal.aborted) throw new RunReleased()
      return store.queue.finish(record, project.settings.limits.historyRuns, details, { claimToken: token, response: JSON.stringify(response) }, documents)
    }
    const flow = project.flows.get(claimed.flow)
    if (!flow?.start) {
      const error = `flow "${claimed.flow}" is no longer in the project`
      return finish(failedRecord(project, claimed, 404, error), undefined, { status: 404, body: errorBody(httpError('FLOW_NOT_FOUND')) })
    }
    // The flow's `concurrency` limits async runs too: a worker waits for a slot (whatever `onLimit`
    // says, since the caller already has its 202), at most the run timeout, then puts the run back.
    const limit = concurrencyOf(flow.start)
    const { runTimeoutMs } = project.settings.limits
    const slot = limit
      ? await acquireFlowSlot(store, claimed.projectId, flow.slug, { ...limit, onLimit: 'queue' }, runTimeoutMs, runTimeoutMs, this.#abort.signal)
      : null
    if (limit && !slot) throw new RunReleased()
    // A flow with a wait may park (SPEC §22): its queue row then waits with it, under this claim.
    const parking = mayPark(flow, project.flows) ? await openParking(store.waits, claimed.projectId, { asyncClaimToken: token }) : undefined
    let outcome
    try {
      outcome = await runFlow({
        ...(parking ? { parking } : {}),
        project,
        flow,
        store,
        insertIds: asyncInsertIds(claimed),
        trigger: 'http',
        method: claimed.method,
        input: JSON.parse(claimed.input) as RunInput,
        runId: claimed.id,
        signal: this.#abort.signal,
        recordRun: finish,
      })
    } finally {
      await slot?.release()
    }
    if (outcome.kind === 'invalid') {
      // Valid at the 202; the flow changed since. Recorded as a failed run with the 400 it would answer now.
      const error = `the input is no longer valid for the flow: ${outcome.errors.join('; ')}`
      await finish(failedRecord(project, claimed, 400, error, flow), undefined, runResponse(outcome))
    }
  }

  async #renewLeases(): Promise<void> {
    const byProject = new Map<string, string[]>()
    for (const [token, { projectId }] of this.#tokens) byProject.set(projectId, [...(byProject.get(projectId) ?? []), token])
    for (const [projectId, tokens] of byProject) {
      // A failed renewal is tried again a third of a lease later; the lease itself is the safety net.
      await this.#workspace
        .get(projectId)
        ?.store?.queue.renewClaims(tokens, this.#leaseMs)
        .catch(() => {})
    }
  }
}

/** The record of an async run that could not start (its flow is gone, or its input no longer fits). */
function failedRecord(project: Project, claimed: ClaimedAsyncRun, httpStatus: number, error: string, flow?: Flow): RunRecord {
  return {
    id: claimed.id,
    projectId: project.settings.projectId,
    flow: flow?.slug ?? claimed.flow,
    trigger: 'http',
    method: claimed.method,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    status: 'error',
    httpStatus,
    ports: [],
    failedNodeId: null,
    error,
    scheduledFor: null,
    replayOf: null,
    resumedFrom: null,
  }
}

/**
 * The ids of an async run's inserts: its nth insert into a collection gets an id made from the run
 * id, the collection and n. A run taken over (attempt 2 and on) keeps a document already stored
 * under such an id: its earlier attempt committed it (a node read after inserting, which commits
 * the inserts before the record), so a resumed run whose inserts happen in the same order does not
 * insert them twice.
 */
function asyncInsertIds(claimed: ClaimedAsyncRun): InsertIds {
  const counts = new Map<string, number>()
  const seconds = Math.floor(new Date(claimed.receivedAt).getTime() / 1000)
    .toString(16)
    .padStart(8, '0')
    .slice(-8)
  return {
    keepExisting: claimed.attempts > 1,
    next(collection) {
      const n = (counts.get(collection) ?? 0) + 1
      counts.set(collection, n)
      // Time first, like every document id (ids sort by creation time); then a hash of run, collection and n.
      return seconds + createHash('sha256').update(`${claimed.id}\0${collection}\0${n}`).digest('hex').slice(0, 16)
    },
  }
}
