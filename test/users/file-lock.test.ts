import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { withFileLock } from '../../src/users/file-lock.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-lock-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The pid of a process that has already exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'])
  await new Promise((resolve) => child.on('exit', resolve))
  return child.pid!
}

describe('withFileLock', () => {
  it('runs actions one at a time and removes the lock afterwards', async () => {
    const file = join(dir, 'users.yaml')
    let inside = 0
    let most = 0
    await Promise.all(
      Array.from({ length: 5 }, () =>
        withFileLock(file, async () => {
          inside++
          most = Math.max(most, inside)
          await new Promise((resolve) => setTimeout(resolve, 20))
          inside--
        }),
      ),
    )
    expect(most).toBe(1)
    expect(existsSync(`${file}.lock`)).toBe(false)
  })

  it('takes over a lock left by a process that is gone', async () => {
    const file = join(dir, 'users.yaml')
    await writeFile(`${file}.lock`, `${await deadPid()} ${Date.now()}\n`)
    expect(await withFileLock(file, async () => 'ran')).toBe('ran')
  })

  it('waits for a lock held by a live process, and runs once it is released', async () => {
    const file = join(dir, 'users.yaml')
    await writeFile(`${file}.lock`, `${process.pid} ${Date.now()}\n`)
    let ran = false
    const waiting = withFileLock(file, async () => {
      ran = true
    })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(ran).toBe(false)
    await rm(`${file}.lock`)
    await waiting
    expect(ran).toBe(true)
  })

  it('releases the lock when the action fails', async () => {
    const file = join(dir, 'users.yaml')
    await expect(withFileLock(file, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(existsSync(`${file}.lock`)).toBe(false)
  })
})
