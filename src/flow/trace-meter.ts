// Which sub-flow calls a run need not keep steps for: the stored trace (run-details.ts) leaves out
// every call that starts after its `limits.traceBytes` cut. An `each` of 10,000 sub-flow calls
// would otherwise hold ~700,000 steps with their outputs until the run ends (~170 MB of heap the
// garbage collector walks again and again) for a trace that shows none of them.
import type { Secrets } from '../model/project.js'
import { maskedJson } from './mask.js'

/**
 * Steps a run records before any is measured: a usual run never measures its outputs twice (the
 * stored trace measures each one as it writes it, run-details.ts). Not counting them only lowers the bound.
 */
const UNMEASURED_STEPS = 1000

interface RunMeter {
  traceBytes: number
  secrets: Secrets
  steps: number
}

/**
 * One walk's share of a lower bound on the stored trace's output bytes that come before its next
 * sub-flow call. The stored trace writes steps depth-first (a step's output, then its calls' steps),
 * each output measured as its masked JSON; once the outputs before a call pass `traceBytes`, the call
 * is cut and left out. Every step counted here comes before the walk's next call in that order (the
 * walk's earlier steps, their calls, and the current step's earlier calls), so a bound past
 * `traceBytes` proves the call is left out. Only for runs whose trace is stored alone: a `_trace`
 * answer is never cut.
 */
export class TraceMeter {
  /** Output bytes recorded in this walk and the walks it called. */
  #bytes = 0

  private constructor(
    private readonly run: RunMeter,
    private readonly parent: TraceMeter | null,
    /** The bound, fixed when this walk's call started, of what comes before the walk's first step. */
    private readonly before: number,
  ) {}

  static forRun(traceBytes: number, secrets: Secrets): TraceMeter {
    return new TraceMeter({ traceBytes, secrets, steps: 0 }, null, 0)
  }

  /** Counts a recorded step's output (as run-details.ts measures it) in this walk and its callers. */
  record(output: unknown): void {
    if (++this.run.steps <= UNMEASURED_STEPS) return
    const bytes = Buffer.byteLength(maskedJson(output, this.run.secrets))
    this.#bytes += bytes
    for (let meter = this.parent; meter; meter = meter.parent) meter.#bytes += bytes
  }

  /** Whether a sub-flow call starting now comes after the stored trace's cut (its steps are never shown). */
  pastCut(): boolean {
    return this.before + this.#bytes > this.run.traceBytes
  }

  /** The meter of a sub-flow call starting now. */
  nested(): TraceMeter {
    return new TraceMeter(this.run, this, this.before + this.#bytes)
  }
}
