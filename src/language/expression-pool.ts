// The expression workers (SPEC §18: bounds are preemptive). An expression that could run long
// (expression-tier.ts) is evaluated in a worker process with a capped heap, and the process is killed
// when the evaluation passes its deadline: `limits.expressionMs` of the worker's CPU time, plus
// DEADLINE_GRACE_MS for the trip there and back. Processes, not worker threads: a worker thread that makes one allocation past its
// heap limit (a growing array's new backing store) aborts the whole server in Node 20, while a process
// only takes itself down. A killed worker is replaced on the next evaluation. Workers start on first use
// (a project whose expressions all stay in the main thread never starts one) and do not keep the
// process alive while idle, so `flowctl run` exits as soon as it is done.
import { fork, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { availableParallelism, setPriority } from 'node:os'
import { fileURLToPath } from 'node:url'
import { EXPRESSION_TIMED_OUT, EXPRESSION_TOO_LARGE, ExpressionError, type ExpressionLimits } from './expression-core.js'

/** What the main thread sends a worker. */
export interface ExpressionJob {
  id: number
  source: string
  limits: ExpressionLimits
  input: Record<string, unknown>
}

/** What a worker answers: once `{ ready }` after it started, then one reply per job. */
export type ExpressionReply = { ready: true } | { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string }

/** Time allowed beyond `limits.expressionMs` for sending the input and the answer between processes. */
const DEADLINE_GRACE_MS = 25
/** However little CPU a worker got (a busy machine), it is stopped after this many times its bound. */
const BACKSTOP_FACTOR = 20
/** Each worker's heap in MB: an expression that builds more fails with "expression result too large". */
const WORKER_HEAP_MB = 128
/** How much lower than the server's a worker's scheduling priority is (nice). */
const WORKER_NICENESS = 10
/** Workers evaluate in parallel up to this many (on a 2-core machine: 2). */
const POOL_SIZE = Math.max(2, Math.min(4, availableParallelism()))

// Tests run the TypeScript sources, which have no worker file of their own: they use the build's.
const WORKER_PATH = fileURLToPath(
  import.meta.url.endsWith('.ts')
    ? new URL('../../dist/language/expression-worker.js', import.meta.url)
    : new URL('../language/expression-worker.js', import.meta.url),
)

interface PendingJob {
  job: ExpressionJob
  resolve: (value: unknown) => void
  reject: (error: Error) => void
}

interface Slot {
  child: ChildProcess
  ready: boolean
  current: PendingJob | null
  deadline: NodeJS.Timeout | null
  /** When the current job was sent, and the worker's CPU time then (ms; null where it cannot be read). */
  sentAt: number
  cpuAtSend: number | null
}

class ExpressionPool {
  readonly #slots = new Set<Slot>()
  readonly #queue: PendingJob[] = []
  #nextId = 0

  evaluate(source: string, limits: ExpressionLimits, input: Record<string, unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ job: { id: this.#nextId++, source, limits, input }, resolve, reject })
      this.#pump()
    })
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const idle = [...this.#slots].find((slot) => slot.ready && slot.current === null)
      if (!idle) {
        if (this.#slots.size < POOL_SIZE) this.#start()
        return
      }
      this.#send(idle, this.#queue.shift() as PendingJob)
    }
  }

  #send(slot: Slot, pending: PendingJob): void {
    slot.current = pending
    keepAlive(slot.child, true)
    slot.child.send(pending.job, (error) => {
      // An input that cannot be copied to another process (it never should: scopes are JSON data).
      if (error && slot.current === pending) this.#stop(slot, error.message)
    })
    slot.sentAt = performance.now()
    slot.cpuAtSend = cpuMsOf(slot.child)
    this.#arm(slot, pending.job.limits.expressionMs + DEADLINE_GRACE_MS)
  }

  /**
   * At the deadline the worker is killed, unless it has not yet had its time on a CPU (a machine busy
   * with other work, where the bound would fail expressions that are not at fault); then the deadline
   * moves by what is left. BACKSTOP_FACTOR × the bound in wall time stops the wait in any case.
   */
  #arm(slot: Slot, delayMs: number): void {
    slot.deadline = setTimeout(() => {
      const limitMs = slot.current?.job.limits.expressionMs ?? 0
      const cpu = cpuMsOf(slot.child)
      const spent = cpu === null || slot.cpuAtSend === null ? Infinity : cpu - slot.cpuAtSend
      const waited = performance.now() - slot.sentAt
      if (spent < limitMs && waited < limitMs * BACKSTOP_FACTOR) this.#arm(slot, limitMs - spent + DEADLINE_GRACE_MS)
      else this.#stop(slot, EXPRESSION_TIMED_OUT)
    }, delayMs)
  }

  #start(): void {
    const child = fork(WORKER_PATH, [], {
      execArgv: [`--max-old-space-size=${WORKER_HEAP_MB}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: {},
    })
    // Below the server's priority: on a busy machine the event loop that answers everyone else runs first.
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, WORKER_NICENESS)
      } catch {
        // Not allowed here (some containers): the worker runs at the server's priority.
      }
    }
    const slot: Slot = { child, ready: false, current: null, deadline: null, sentAt: 0, cpuAtSend: null }
    this.#slots.add(slot)
    // Started for a job that waits: alive until it is ready and takes one (#release lets go).
    keepAlive(child, true)
    child.on('message', (reply: ExpressionReply) => this.#answer(slot, reply))
    child.on('error', (error) => this.#stop(slot, `expression worker failed: ${error.message}`))
    // V8 aborts a process whose heap is full: the expression built more than WORKER_HEAP_MB.
    child.on('exit', (_code, signal) => this.#stop(slot, signal === 'SIGABRT' || _code === 134 ? EXPRESSION_TOO_LARGE : 'expression worker stopped'))
  }

  #answer(slot: Slot, reply: ExpressionReply): void {
    if ('ready' in reply) {
      slot.ready = true
      keepAlive(slot.child, false)
    } else if (slot.current?.job.id === reply.id) {
      const { resolve, reject } = slot.current
      this.#release(slot)
      if (reply.ok) resolve(reply.value)
      else reject(new ExpressionError(reply.message))
    }
    this.#pump()
  }

  #release(slot: Slot): void {
    if (slot.deadline) clearTimeout(slot.deadline)
    slot.deadline = null
    slot.current = null
    keepAlive(slot.child, false)
  }

  /** Ends a worker (past its deadline, out of memory, or gone) and fails the job it had. */
  #stop(slot: Slot, reason: string): void {
    if (!this.#slots.delete(slot)) return
    const pending = slot.current
    this.#release(slot)
    slot.child.kill('SIGKILL')
    // A worker that failed before it was ever ready cannot evaluate anything: fail what waits too.
    const failed = slot.ready ? (pending ? [pending] : []) : [...(pending ? [pending] : []), ...this.#queue.splice(0)]
    for (const { reject } of failed) reject(new ExpressionError(reason))
    this.#pump()
  }
}

/** CPU time a worker process has used, in ms, from Linux's scheduler statistics; null elsewhere. */
function cpuMsOf(child: ChildProcess): number | null {
  if (child.pid === undefined) return null
  try {
    return Number(readFileSync(`/proc/${child.pid}/schedstat`, 'utf8').split(' ', 1)[0]) / 1e6
  } catch {
    return null
  }
}

/** A busy worker keeps the event loop alive (its answer is awaited); an idle one does not. */
function keepAlive(child: ChildProcess, busy: boolean): void {
  const channel = child.channel as { ref(): void; unref(): void } | null | undefined
  if (busy) {
    child.ref()
    channel?.ref()
  } else {
    child.unref()
    channel?.unref()
  }
}

let pool: ExpressionPool | undefined

/** Evaluates in an expression worker; rejects with ExpressionError. */
export function evaluateInWorker(source: string, limits: ExpressionLimits, input: Record<string, unknown>): Promise<unknown> {
  pool ??= new ExpressionPool()
  return pool.evaluate(source, limits, input)
}
