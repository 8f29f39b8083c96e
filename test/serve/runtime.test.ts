// startRuntime: loads the projects of a serve process into one workspace with their stores open,
// reports what it leaves out, and close() releases every store.
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startRuntime } from '../../src/serve/runtime.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { cleanupTempDirs, copyFixture } from '../helpers.js'

afterAll(cleanupTempDirs)

describe('startRuntime', () => {
  it('serves each projectId once, opens the stores, and closes them', async () => {
    const logs: string[] = []
    const first = await copyFixture('example')
    const second = await copyFixture('example')
    const runtime = await startRuntime([first, second], { env: {}, log: (line) => logs.push(line), watch: false, openStore: () => openSqliteStore(':memory:') })
    expect(runtime.workspace.list().map((entry) => entry.project.dir)).toEqual([first])
    expect(logs.some((line) => line.includes(`error: ${second}: projectId "shop" is already served from ${first}; skipped`))).toBe(true)
    const entry = runtime.workspace.get('shop')
    expect(entry?.store).not.toBeNull()
    expect(entry?.storeError).toBeNull()
    runtime.startCron()
    runtime.startCron() // a second call keeps the one timer
    runtime.stopCron()
    await runtime.close()
    expect(runtime.workspace.get('shop')?.store).toBeNull()
    expect(runtime.workspace.get('shop')?.storeError).toBe('closed')
  })

  it('keeps serving a project whose store cannot open, and says why once', async () => {
    const logs: string[] = []
    const runtime = await startRuntime([await copyFixture('example')], {
      env: {},
      log: (line) => logs.push(line),
      watch: false,
      openStore: () => Promise.reject(new Error('connect ECONNREFUSED postgres://flow:pw-1234@db:5432/x')),
    })
    expect(runtime.workspace.get('shop')?.store).toBeNull()
    expect(logs).toEqual(['shop: store unavailable: connect ECONNREFUSED postgres://***@db:5432/x (runs answer 503; retrying)'])
    await runtime.close()
  })

  it('throws the not-found error when no folder holds a project, leaving nothing open', async () => {
    const missing = join(await copyFixture('example'), 'nowhere')
    await expect(startRuntime([missing], { env: {}, log: () => {}, watch: false })).rejects.toMatchObject({ code: 'PROJECT_NOT_FOUND' })
  })
})
