// A lock file beside the users file, so concurrent `flowctl users` commands (two terminals, a
// provisioning script) each read, change and write the file in turn instead of one losing the
// other's change. The lock is a file created with O_EXCL holding the owner's pid; a lock whose
// process is gone, or that is older than STALE_MS, is taken over.
import { open, readFile, rm } from 'node:fs/promises'
import { FlowctlError } from '../errors.js'

const WAIT_MS = 10_000
const RETRY_MS = 15
const STALE_MS = 60_000

/** Runs `action` while holding `<file>.lock`. */
export async function withFileLock<T>(file: string, action: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    if (await tryCreate(lock)) break
    if (await isStale(lock)) {
      await rm(lock, { force: true })
      continue
    }
    if (Date.now() > deadline) {
      throw new FlowctlError('CONFLICT', `${file} is locked by another flowctl users command (remove ${lock} if none is running)`)
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
  }
  try {
    return await action()
  } finally {
    await rm(lock, { force: true })
  }
}

async function tryCreate(lock: string): Promise<boolean> {
  try {
    const handle = await open(lock, 'wx', 0o600)
    try {
      await handle.writeFile(`${process.pid} ${Date.now()}\n`)
    } finally {
      await handle.close()
    }
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw new FlowctlError('IO_FAILED', `cannot lock ${lock}: ${(error as Error).message}`, { cause: error })
  }
}

/** The owner's process is gone, or the lock is older than any command takes. */
async function isStale(lock: string): Promise<boolean> {
  let text: string
  try {
    text = await readFile(lock, 'utf8')
  } catch {
    return false // released meanwhile: the next try takes it
  }
  const [pid, since] = text.trim().split(' ').map(Number)
  // Written but not yet filled in by its owner: not stale.
  if (!pid || !since) return false
  if (Date.now() - since > STALE_MS) return true
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}
