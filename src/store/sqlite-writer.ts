// The main thread's side of the writer thread (sqlite-writer-thread.ts). `serve` commits runs and
// documents there: SQLite's transaction work was about a third of the Run API's CPU on the one
// thread that also parses requests and runs flows. A caller's promise still settles only after the
// commit holding its write (the thread answers once COMMIT returned), so durability is unchanged.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
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

interface Waiting {
  resolve: (result: CommitResult) => void
  reject: (error: unknown) => void
}

export class SqliteWriterThread {
  private readonly waiting = new Map<number, Waiting>()
  private nextId = 1
  private stopped: Error | null = null

  private constructor(private readonly worker: Worker) {
    worker.on('message', (message: FromWriter) => this.receive(message))
    worker.on('error', (error) => this.stop(error))
    worker.on('exit', (code) => this.stop(new Error(`the writer thread exited (code ${code})`)))
  }

  /** Starts the thread on `file` (already migrated) and waits until its connection is open. */
  static async start(file: string): Promise<SqliteWriterThread> {
    const worker = new Worker(threadScript(), { workerData: { file } })
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: FromWriter) => {
        worker.off('exit', onExit)
        if (message.type === 'ready') resolve()
        else reject(new Error(message.type === 'open-failed' ? message.error.message : `unexpected ${message.type}`))
      }
      const onExit = (code: number) => {
        worker.off('message', onMessage)
        reject(new Error(`the writer thread exited (code ${code}) before it was ready`))
      }
      worker.once('message', onMessage)
      worker.once('exit', onExit)
    })
    worker.unref()
    return new SqliteWriterThread(worker)
  }

  /** Commits one batch on the thread; rejects (STORE_UNAVAILABLE when the database is unusable) if the whole batch failed. */
  commit(items: SqliteWrite[]): Promise<CommitResult> {
    if (this.stopped) return Promise.reject(this.unavailable(this.stopped))
    const id = this.nextId++
    return new Promise<CommitResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      // Keep the process alive while a commit is under way, and only then.
      if (this.waiting.size === 1) this.worker.ref()
      this.post({ type: 'commit', id, items })
    })
  }

  /**
   * Closes the thread's connection; call once every commit settled. Never `worker.terminate()` it:
   * terminating a thread inside a better-sqlite3 call that then throws is a fatal V8 error that
   * aborts the whole process (seen with a commit waiting on a held write lock).
   */
  async close(): Promise<void> {
    if (this.stopped) return
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()))
    this.worker.ref()
    this.post({ type: 'close' })
    await exited
  }

  private post(message: ToWriter): void {
    this.worker.postMessage(message)
  }

  private receive(message: FromWriter): void {
    if (message.type !== 'committed' && message.type !== 'failed') return
    const waiting = this.waiting.get(message.id)
    if (!waiting) return
    this.waiting.delete(message.id)
    if (this.waiting.size === 0) this.worker.unref()
    if (message.type === 'failed') waiting.reject(storeError(fromThreadError(message.error)))
    else waiting.resolve(message.failures.length ? new Map(message.failures.map(([index, error]) => [index, fromThreadError(error)])) : undefined)
  }

  /**
   * The thread is gone: closed, or a fatal error (it catches every SQLite error), which in practice
   * ends the process too. Whatever waits for it, and every later commit, fails as unavailable.
   */
  private stop(reason: Error): void {
    this.stopped ??= reason
    for (const waiting of this.waiting.values()) waiting.reject(this.unavailable(reason))
    this.waiting.clear()
  }

  private unavailable(reason: Error): FlowctlError {
    return new FlowctlError('STORE_UNAVAILABLE', `the embedded database's writer is not running: ${reason.message}`, { cause: reason })
  }
}
