// Resumes parked runs (SPEC §22) in one `serve` process. Nothing is held per parked run: once a
// second each project's store is asked for runs to resume — callbacks delivered, waits past their
// due time (a callback's timeout, a sleep's end) and claims whose lease ran out (an instance died
// while resuming) — by one indexed query, and a resume POST wakes the project at once. A claim is
// this instance's for `leaseMs` (the run timeout plus a margin: a resumed stretch is bounded by the
// run timeout); the run's final record and its row's completion commit in one transaction that only
// a holder of the claim can make, so each run finishes exactly once, on whichever instance. The
// claim loop (free slots, re-claims) is claim-pump.ts, shared with the async runner.
import { createHash, randomUUID } from 'node:crypto'
import { resumeRun } from '../flow/engine.js'
import { openParking, wakeOutput, type ParkedState } from '../flow/park.js'
import type { InsertIds, RunResponse } from '../model/run.js'
import type { Project } from '../model/project.js'
import type { RunDetailsText, RunDocument, RunRecord, Store } from '../model/store.js'
import { isParkClaimLost, type ClaimedParkedRun } from '../model/waits.js'
import type { Workspace } from '../serve/workspace.js'
import { ClaimPump } from './claim-pump.js'

export interface WaitRunnerOptions {
  /** How often each project is asked for runs to resume (default 1,000 ms). */
  pollMs?: number
  /** Resumed runs of one project at once on this instance (default 8). */
  concurrency?: number
  log?: (line: string) => void
}

/** Thrown by the record hook when shutdown stopped a resumed run: it is left claimed, and taken again once its lease runs out. */
class ResumeAbandoned extends Error {}

/** A claimed parked run with the project and store it was claimed from. */
interface ResumeWork {
  claimed: ClaimedParkedRun
  project: Project
  store: Store
}

export class WaitRunner {
  readonly #workspace: Workspace
  readonly #pollMs: number
  readonly #concurrency: number
  readonly #log: (line: string) => void
  readonly #pump: ClaimPump<ResumeWork>
  readonly #abort = new AbortController()
  #timer: NodeJS.Timeout | null = null

  constructor(workspace: Workspace, options: WaitRunnerOptions = {}) {
    this.#workspace = workspace
    this.#pollMs = options.pollMs ?? 1_000
    this.#concurrency = options.concurrency ?? 8
    this.#log = options.log ?? (() => {})
    this.#pump = new ClaimPump<ResumeWork>({
      concurrency: (projectId) => (this.#workspace.get(projectId)?.store ? this.#concurrency : 0),
      claim: (projectId, limit) => this.#claim(projectId, limit),
      run: (work) => this.#execute(work),
      claimFailed: (projectId, message) => this.#log(`${projectId}: cannot claim parked runs: ${message}`),
    })
  }

  start(): this {
    this.#timer = setInterval(() => {
      for (const { project } of this.#workspace.list()) this.wake(project.settings.projectId)
    }, this.#pollMs)
    this.#timer.unref()
    for (const { project } of this.#workspace.list()) this.wake(project.settings.projectId)
    return this
  }

  /** Looks for runs to resume in one project now (a callback was just delivered). */
  wake(projectId: string): void {
    this.#pump.wake(projectId)
  }

  /** Stops claiming and waits up to `graceMs` for resumed runs; those still going are abandoned to their lease. */
  async stop(graceMs: number): Promise<void> {
    if (this.#timer) clearInterval(this.#timer)
    await this.#pump.stop(graceMs, () => this.#abort.abort())
  }

  async #claim(projectId: string, limit: number): Promise<ResumeWork[]> {
    const entry = this.#workspace.get(projectId)
    const store = entry?.store
    if (!entry || !store) return []
    // A resumed stretch is bounded by the run timeout; the lease outlasts it with a margin.
    const leaseMs = entry.project.settings.limits.runTimeoutMs + 30_000
    const claimed = await store.waits.claimDue(projectId, { limit, leaseMs, token: randomUUID() })
    return claimed.map((run) => ({ claimed: run, project: entry.project, store }))
  }

  async #execute({ claimed, project, store }: ResumeWork): Promise<void> {
    try {
      // The project as it is now: a reload while the run was parked applies.
      const current = this.#workspace.get(claimed.projectId)?.project ?? project
      await resumeClaimed(claimed, current, store, this.#abort.signal)
    } catch (error) {
      if (error instanceof ResumeAbandoned) return
      if (isParkClaimLost(error)) this.#log(`${claimed.projectId}: parked run ${claimed.id} was resumed by another worker; this attempt's result is dropped`)
      else this.#log(`${claimed.projectId}: parked run ${claimed.id} could not be resumed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

/** Runs one claimed parked run on from its wait, and records or parks it again under its claim. */
async function resumeClaimed(claimed: ClaimedParkedRun, project: Project, store: Store, signal: AbortSignal): Promise<void> {
  const state = JSON.parse(claimed.state) as ParkedState
  const parking = await openParking(store.waits, claimed.projectId, { claimToken: claimed.claimToken })
  const recordRun = (record: RunRecord, details: RunDetailsText | undefined, response: RunResponse, documents: readonly RunDocument[]) => {
    if (signal.aborted) throw new ResumeAbandoned()
    return store.waits.finish(record, details, claimed.claimToken, JSON.stringify(response), documents)
  }
  await resumeRun({
    project,
    store,
    state,
    port: claimed.port,
    output: wakeOutput(state, claimed.port, claimed.payload, new Date()),
    parking,
    signal,
    insertIds: resumedInsertIds(claimed, state.parkedAt),
    recordRun,
  })
}

/**
 * The ids of a resumed stretch's inserts, made from the run id, its park count, the collection and
 * n: a stretch run again (its instance died before finishing) inserts the same ids and keeps what
 * the first attempt committed, so no document is inserted twice.
 */
function resumedInsertIds(claimed: ClaimedParkedRun, parkedAt: string): InsertIds {
  const counts = new Map<string, number>()
  const seconds = Math.floor(Date.parse(parkedAt) / 1000)
    .toString(16)
    .padStart(8, '0')
    .slice(-8)
  return {
    keepExisting: true,
    next(collection) {
      const n = (counts.get(collection) ?? 0) + 1
      counts.set(collection, n)
      return seconds + createHash('sha256').update(`${claimed.id}\0${claimed.seq}\0${collection}\0${n}`).digest('hex').slice(0, 16)
    },
  }
}
