// The main thread's side of the writer thread (sqlite-writer-thread.ts). `serve` commits runs and
// documents there: SQLite's transaction work was about a third of the Run API's CPU on the one
// thread that also parses requests and runs flows. A caller's promise still settles only after the
// commit holding its write (the thread answers once COMMIT returned), so durability is unchanged.
// One thread serves every embedded database of the process (serve may hold several projects).
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Worker } from 'node:worker_threads'
import { FlowctlError } from '../errors.js'
import type { SqliteWrite } from './sqlite-commit.js'
import { storeError } from './sqlite-connection.js'
import type { FromWriter, ThreadError, ToWriter } from './sqlite-writer-thread.js'
import type { CommitResult } from './write-batch.js'

/**
 * The thread's script beside this module (dist/store/ or the CLI bundle in dist/bin/). Under vitest
 * this module is src/store/sqlite-writer.ts, and a worker cannot run TypeScript: it runs the build.
 */
function threadScript(): URL {
  const beside = new URL('./sqlite-writer-thread.js', import.meta.url)
  if (import.meta.url.endsWith('.ts') && !existsSync(fileURLToPath(beside))) return new URL('../../dist/store/sqlite-writer-thread.js', import.meta.url)
  return beside
}

function fromThreadError(error: ThreadError): Error {
  return Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code })
}

function unavailable(reason: Error): FlowctlError {
  return new FlowctlError('STORE_UNAVAILABLE', `the embedded database's writer thread stopped: ${reason.message}`, { cause: reason })
}

/** A message to the thread before it gets its id (Omit applied to each member of the union). */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never
type Request = WithoutId<ToWriter>

interface Waiting {
  resolve: (answer: FromWriter) => void
  reject: (error: unknown) => void
}

/**
 * The thread and its pending requests. It is unref'd while nothing is pending, so it never keeps
 * the process alive by itself. It is never `terminate()`d while working: terminating a thread inside
 * a better-sqlite3 call that then throws is a fatal V8 error that aborts the whole process (seen with
 * a commit waiting on a held write lock).
 */
class WriterThread {
  private readonly waiting = new Map<number, Waiting>()
  private nextId = 1
  stopped: Error | null = null

  constructor(private readonly worker: Worker) {
    worker.unref()
    worker.on('message', (answer: FromWriter) => this.receive(answer))
    worker.on('error', (error) => this.stop(error))
    worker.on('exit', (code) => this.stop(new Error(`it exited (code ${code})`)))
  }

  request(message: Request): Promise<FromWriter> {
    if (this.stopped) return Promise.reject(unavailable(this.stopped))
    const id = this.nextId++
    return new Promise<FromWriter>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      if (this.waiting.size === 1) this.worker.ref()
      this.worker.postMessage({ ...message, id } as ToWriter)
    })
  }

  private receive(answer: FromWriter): void {
    const waiting = this.waiting.get(answer.id)
    if (!waiting) return
    this.waiting.delete(answer.id)
    if (this.waiting.size === 0) this.worker.unref()
    waiting.resolve(answer)
  }

  /** A fatal error ended the thread (it catches every SQLite error); in practice the process goes too. */
  private stop(reason: Error): void {
    this.stopped ??= reason
    if (thread === this) thread = null
    for (const waiting of this.waiting.values()) waiting.reject(unavailable(reason))
    this.waiting.clear()
  }
}

let thread: WriterThread | null = null
let nextConnection = 1

/**
 * The writer thread's connection for `file`, opened by the first commit. A server that records no
 * run (docs, dashboard, a project nobody calls yet) starts no thread: it costs ~14 MB of RSS
 * (bench/results.md, stop 26). The first commit waits for the thread (tens of ms, once); if the
 * thread cannot open the database, that commit fails (STORE_UNAVAILABLE) and the next one tries again.
 */
export function lazyWriterConnection(file: string): Pick<SqliteWriterConnection, 'commit' | 'close'> {
  let opening: Promise<SqliteWriterConnection> | null = null
  let closed = false
  return {
    async commit(items) {
      if (closed) throw new FlowctlError('STORE_UNAVAILABLE', 'the embedded database is closed')
      opening ??= SqliteWriterConnection.open(file).catch((error: unknown) => {
        opening = null
        throw error
      })
      return (await opening).commit(items)
    },
    async close() {
      closed = true
      // Commits settle before close is called (the store drains them), so `opening` has settled.
      const connection = await opening?.catch(() => null)
      await connection?.close()
    },
  }
}

/** One database's connection on the writer thread. */
export class SqliteWriterConnection {
  private closed = false

  private constructor(
    private readonly on: WriterThread,
    private readonly connection: number,
  ) {}

  /** Opens `file` (already migrated) on the writer thread, starting the thread the first time. */
  static async open(file: string): Promise<SqliteWriterConnection> {
    // node:worker_threads is loaded here, by the first writer thread: one-shot commands never start one.
    thread ??= new WriterThread(new (process.getBuiltinModule('node:worker_threads').Worker)(threadScript()))
    const connection = nextConnection++
    const answer = await thread.request({ type: 'open', connection, file })
    if (answer.type === 'error') throw storeError(fromThreadError(answer.error))
    return new SqliteWriterConnection(thread, connection)
  }

  /** Commits one batch; rejects (STORE_UNAVAILABLE when the database is unusable) if the whole batch failed. */
  async commit(items: SqliteWrite[]): Promise<CommitResult> {
    if (this.closed) throw new FlowctlError('STORE_UNAVAILABLE', 'the embedded database is closed')
    const answer = await this.on.request({ type: 'commit', connection: this.connection, items })
    if (answer.type === 'error') throw storeError(fromThreadError(answer.error))
    if (answer.type !== 'committed' || answer.failures.length === 0) return undefined
    return new Map(answer.failures.map(([index, error]) => [index, fromThreadError(error)]))
  }

  /** Closes this connection (the thread stays for the others); call once every commit settled. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (!this.on.stopped) await this.on.request({ type: 'close', connection: this.connection })
  }
}
